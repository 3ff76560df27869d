struct Thing {}

enum Thing { A }
