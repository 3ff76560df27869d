struct user_info {}
struct UserInfo {}
