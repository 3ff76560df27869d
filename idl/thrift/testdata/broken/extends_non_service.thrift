struct Base {}

service S extends Base {}
