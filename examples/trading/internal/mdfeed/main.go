package mdfeed

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/dutyrt/duty/zmtp"
)

// Main is the feeder program's main (examples/trading/mdfeed, and the
// demo's child with -md); it returns the exit status. The first line on
// stdout is "mdfeed: publishing on ENDPOINT", once bound; the last, the
// counts.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mdfeed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg Config
	var watch bool
	fs.StringVar(&cfg.Endpoint, "bind", "tcp://127.0.0.1:5556", "endpoint to publish on (tcp://host:port, port 0 for any; ipc:///path)")
	fs.IntVar(&cfg.Instruments, "instruments", 8, "number of instruments (the demo's -instruments)")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the quotes (the demo's -seed)")
	fs.Int64Var(&cfg.Rate, "rate", 100_000, "quotes per second")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Second, "how long to publish")
	fs.DurationVar(&cfg.Wait, "wait", 30*time.Second, "longest wait for a subscriber")
	fs.BoolVar(&watch, "watch-parent", false, "stop when the process that started this one is gone")
	var keygen, secretFile, allow string
	fs.StringVar(&keygen, "keygen", "", "make a CURVE key pair, write its secret key to this new file, print its public key, and exit")
	fs.StringVar(&secretFile, "curve-secret", "", "serve with CURVE: the file holding this feeder's secret key (Z85)")
	fs.StringVar(&allow, "curve-allow", "", "with -curve-secret: the public keys (Z85, comma-separated) of the subscribers admitted")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mdfeed: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if keygen != "" {
		pub, err := WriteKeyPair(keygen)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		fmt.Fprintln(stdout, pub.Z85())
		return 0
	}
	if secretFile != "" || allow != "" {
		cv, err := serverCurve(secretFile, allow)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		cfg.Curve = cv
	}
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg.Bound = func(ep string) { fmt.Fprintf(stdout, "mdfeed: publishing on %s\n", ep) }
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if watch {
		ctx = watchParent(ctx)
	}
	e, err := Run(ctx, cfg)
	fmt.Fprintf(stdout, "mdfeed: %d quotes published, %d dropped\n", e.Published, e.Dropped)
	if err != nil {
		fmt.Fprintln(stderr, "mdfeed:", err)
		return 1
	}
	return 0
}

// serverCurve is the feeder's CURVE: its key pair from secretFile, the
// subscribers' keys from allow.
func serverCurve(secretFile, allow string) (*zmtp.Curve, error) {
	if secretFile == "" || allow == "" {
		return nil, fmt.Errorf("mdfeed: CURVE needs both -curve-secret and -curve-allow")
	}
	pub, sec, err := ReadSecretKey(secretFile)
	if err != nil {
		return nil, err
	}
	keys, err := ParseKeys(allow)
	if err != nil {
		return nil, err
	}
	return &zmtp.Curve{Public: pub, Secret: sec, Server: true, Allow: keys}, nil
}

// watchParent returns a context that ends when the parent process is gone
// (the child is then re-parented).
func watchParent(ctx context.Context) context.Context {
	ctx, cancel := context.WithCancel(ctx)
	ppid := os.Getppid()
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if os.Getppid() != ppid {
					cancel()
					return
				}
			}
		}
	}()
	return ctx
}
