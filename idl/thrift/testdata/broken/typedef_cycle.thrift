typedef B A
typedef list<A> B
