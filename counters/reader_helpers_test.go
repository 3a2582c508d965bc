package counters

// The per-field reads the tests make, through Record (the public read of
// one id) where it has the field.

func (r *Reader) stateOf(id int) (int32, error) {
	rec, err := r.Record(id)
	return rec.State, err
}

func (r *Reader) typeIDOf(id int) (int32, error) {
	rec, err := r.Record(id)
	return rec.TypeID, err
}

func (r *Reader) deadlineOf(id int) (int64, error) {
	rec, err := r.Record(id)
	return rec.FreeForReuseDeadline, err
}

func (r *Reader) registrationIDOf(id int) (int64, error) {
	rec, err := r.Record(id)
	return rec.RegistrationID, err
}

func (r *Reader) labelOf(id int) (string, error) {
	rec, err := r.Record(id)
	return string(rec.Label), err
}

// keyOf reads the key area whatever the record's state.
func (r *Reader) keyOf(id int) ([]byte, error) {
	if err := r.checkID(id); err != nil {
		return nil, err
	}
	key := make([]byte, maxKeyLength)
	loadWords(r.meta, metadataOffset(id)+keyOffset, key)
	return key, nil
}

// forEach is ForEachRecord with Agrona's forEach arguments.
func (r *Reader) forEach(fn func(id int, typeID int32, label string, key []byte, value int64) bool) error {
	return r.ForEachRecord(func(c Record) bool {
		return fn(c.ID, c.TypeID, string(c.Label), c.Key, c.Value)
	})
}

func (r *Reader) findByTypeIDAndRegistrationID(typeID int32, registrationID int64) (int, error) {
	return r.find(func(id int) bool {
		return r.typeID(id) == typeID && r.registrationID(id) == registrationID
	})
}
