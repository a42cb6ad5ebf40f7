package bolt

// Path is the table's file: local features keep their own files beside it
// (the data export's stage folder, its key-encryption secret).
func (t *Table) Path() string { return t.path }
