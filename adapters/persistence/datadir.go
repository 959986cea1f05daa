package persistence

// SQLiteFile is the name of the embedded database inside the data dir.
const SQLiteFile = "formward.db"
