package journal

import "github.com/dutyrt/duty/internal/journalfile"

// openStatus creates the writer's status file, maps it and publishes the
// first status.
func (j *Journal) openStatus() error {
	s, err := journalfile.CreateStatus(j.dir)
	if err != nil {
		return err
	}
	j.status = s
	j.publishStatus()
	return nil
}

// publishStatus stores the writer's positions and counts into the status
// file: atomic stores (release), which a reader's atomic loads pair with.
// The Flusher calls it every duty cycle, Flush and Close too. It
// allocates nothing.
func (j *Journal) publishStatus() {
	if j.status == nil {
		return
	}
	j.mu.Lock()
	tailers, segs := 0, len(j.segs)
	for t := range j.tailers {
		if t.pub == nil {
			tailers++
		}
	}
	if j.reg != nil {
		tailers += j.reg.Active()
	}
	j.mu.Unlock()
	j.status.Publish(j.committed.Load(), j.flushed.Load(), int64(tailers), int64(segs), j.opts.Clock())
}

// closeStatus publishes the final status, marks the writer gone and
// unmaps the file.
func (j *Journal) closeStatus() error {
	if j.status == nil {
		return nil
	}
	j.publishStatus()
	err := j.status.Close()
	j.status = nil
	return err
}
