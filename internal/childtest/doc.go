// Package childtest runs a test binary again as a child process in a
// role, for the tests that cross a process boundary or kill a process
// (SIGKILL): shared files read by another process, crash and recovery,
// liveness checks. It is for tests only.
//
// Contract. TestMain calls Run first: when the environment variable the
// package chose names a role, Run runs that role's function and ends the
// process (exit status 0, or 1 with the error on stderr), so the child
// never runs the tests. A test starts a child with Start (or Command,
// then Proc.Start), passing the role's parameters as further environment
// variables; the child reports on stdout, one line per event, which the
// test reads with Line (bounded by a generous hang guard that fails the
// test), Next or LineAsync. Only processes a test started are ever
// signalled: Kill sends SIGKILL to the test's own child, and a child
// still running when its test ends is killed and reaped then.
package childtest
