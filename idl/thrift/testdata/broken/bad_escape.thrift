const string S = "bad \q escape"
