const uuid U = "not-a-uuid"
