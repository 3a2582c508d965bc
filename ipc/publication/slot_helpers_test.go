package publication

// Test views of a slot's state word (see slot).
func slotWordOf(sl slot) int64         { return sl.word.Load() }
func slotStateOf(sl slot) int32        { return sl.state() }
func slotRegistrationOf(sl slot) int64 { return sl.registration() }
