package journal

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// childRegistered opens the journal read-only, registers a Tailer (named
// "child-reader") and obeys commands on stdin, one a line:
//
//	read N   read N records (checking order and bodies), print "at POS"
//	next     call Next once, print "record", "none" or "behind"
//
// Other errors end it with a failure. Between commands it waits, holding
// its slot, until killed or stdin closes.
func childRegistered() error {
	j, err := Open(os.Getenv("DUTY_JOURNAL_DIR"), Options{ReadOnly: true, ReaderName: "child-reader"})
	if err != nil {
		return err
	}
	defer j.Close()
	tl, err := j.NewTailer()
	if err != nil {
		return err
	}
	defer tl.Close()
	fmt.Printf("at %d\n", tl.Position())
	next := map[uint32]int64{}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		switch {
		case len(f) == 2 && f[0] == "read":
			want, _ := strconv.Atoi(f[1])
			if err := readChecked(tl, want, next, true); err != nil {
				return err
			}
			fmt.Printf("at %d\n", tl.Position())
		case len(f) == 1 && f[0] == "next":
			_, ok, err := tl.Next()
			switch {
			case errors.Is(err, ErrBehindRetention):
				fmt.Println("behind")
			case err != nil:
				return err
			case ok:
				fmt.Println("record")
			default:
				fmt.Println("none")
			}
		default:
			return fmt.Errorf("command %q", in.Text())
		}
	}
	return in.Err()
}
