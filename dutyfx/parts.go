package dutyfx

import (
	"errors"
	"fmt"
	"slices"

	"go.uber.org/fx"

	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/mailbox"
)

// Named returns the fx tag of the part of that name, for fx.ParamTags:
//
//	fx.Provide(fx.Annotate(NewEngine, fx.ParamTags(dutyfx.Named("orders"), dutyfx.Named("fills"))))
func Named(name string) string { return `name:"` + name + `"` }

// Mailbox provides a *mailbox.Mailbox on the heap, made from cfg (its Name
// defaults to name), under the name tag name: several mailboxes of one Go
// type live in one graph, told apart by their tags (Named).
func Mailbox(name string, cfg mailbox.Config) fx.Option {
	if cfg.Name == "" {
		cfg.Name = name
	}
	return fx.Provide(fx.Annotate(func() (*mailbox.Mailbox, error) { return mailbox.New(cfg) },
		fx.ResultTags(Named(name))))
}

// sharedDir is the directory of the shared files SharedMailbox, Counters and
// ErrorLog create (SharedFiles supplies it).
type sharedDir string

// fileOptions are the ipc options SharedFiles gives every file it makes.
type fileOptions []ipc.Option

// keeperRole is the role of the agent that heartbeats the shared files.
const keeperRole = "duty-keeper"

// keeperIdle is the keeper's idle spec unless Config.Idle names its role:
// no spinning after a beat, then asleep until the next (ipc.Keeper's
// NextDeadline), or the wake strategy's longest sleep.
const keeperIdle = "wake:1"

// SharedFiles makes the modules SharedMailbox, Counters and ErrorLog
// create their files in dir ("" for ipc.DefaultDir()), with opts, and runs
// an ipc.Keeper (role "duty-keeper", provided as *ipc.Keeper) in the group
// Runners runs, which heartbeats every file they create and sleeps
// between beats (Config.Idle). Files are created when the graph is built,
// so that constructors can use them, and removed and closed on fx stop,
// last first, after the group has stopped and Config.OnStopped has
// returned, whichever part of the graph asked for them.
func SharedFiles(dir string, opts ...ipc.Option) fx.Option {
	return fx.Options(
		fx.Supply(sharedDir(dir), fileOptions(opts)),
		fx.Provide(newFiles, func(f *files) *ipc.Keeper { return f.keeper }),
		Include[*ipc.Keeper](),
	)
}

// files are the files SharedFiles's modules created. Runners depends on
// them, so that their stop hook, appended before the group's, runs after
// it.
type files struct {
	keeper  *ipc.Keeper
	closers []func() error
}

func newFiles(fo fileOptions, lc fx.Lifecycle) (*files, error) {
	k, err := ipc.NewKeeper(keeperRole, 0, fo...)
	if err != nil {
		return nil, err
	}
	f := &files{keeper: k}
	lc.Append(fx.StopHook(func() error {
		var errs []error
		for _, c := range slices.Backward(f.closers) {
			errs = append(errs, c())
		}
		f.closers = nil
		return errors.Join(errs...)
	}))
	return f, nil
}

type fileParams struct {
	fx.In
	Dir     sharedDir
	Options fileOptions
	Files   *files
}

// keep hands f to the keeper, and on fx stop takes it back, removes its
// name and closes it with closeFn (the handle's Close, which releases the
// file's reference).
func keep(p fileParams, f *ipc.File, closeFn func() error) error {
	k := p.Files.keeper
	if err := k.Add(f); err != nil {
		return errors.Join(err, f.Remove(), closeFn())
	}
	p.Files.closers = append(p.Files.closers, func() error {
		k.Remove(f)
		return errors.Join(f.Remove(), closeFn())
	})
	return nil
}

// SharedMailbox creates a mailbox file named name in the SharedFiles
// directory (this process is its consumer) and provides the
// *mailbox.Mailbox and its *ipc.MailboxFile under the name tag name.
// Other processes send to it with ipc.OpenMailbox on its path
// (MailboxFile.Path).
func SharedMailbox(name string, cfg mailbox.Config, opts ...ipc.Option) fx.Option {
	if cfg.Name == "" {
		cfg.Name = name
	}
	return fx.Provide(fx.Annotate(func(p fileParams) (*mailbox.Mailbox, *ipc.MailboxFile, error) {
		mb, mf, err := ipc.CreateMailbox(string(p.Dir), name, cfg, append(p.Options, opts...)...)
		if err != nil {
			return nil, nil, fmt.Errorf("dutyfx: mailbox %s: %w", name, err)
		}
		if err := keep(p, mf.File, mf.Close); err != nil {
			return nil, nil, err
		}
		return mb, mf, nil
	}, fx.ResultTags(Named(name), Named(name))))
}

// Counters creates a counters file named name with room for n counters in
// the SharedFiles directory and provides its *ipc.CountersFile under the
// name tag name (runner.WithCounters takes its Manager).
func Counters(name string, n int, opts ...ipc.Option) fx.Option {
	return fx.Provide(fx.Annotate(func(p fileParams) (*ipc.CountersFile, error) {
		cf, err := ipc.CreateCounters(string(p.Dir), name, n, nil, append(p.Options, opts...)...)
		if err != nil {
			return nil, fmt.Errorf("dutyfx: counters %s: %w", name, err)
		}
		if err := keep(p, cf.File, cf.Close); err != nil {
			return nil, err
		}
		return cf, nil
	}, fx.ResultTags(Named(name))))
}

// ErrorLog creates an error log file named name of length bytes in the
// SharedFiles directory and provides its *ipc.ErrorLogFile under the name
// tag name (errlog.Handler turns its Log into a runner's error handler).
func ErrorLog(name string, length int, opts ...ipc.Option) fx.Option {
	return fx.Provide(fx.Annotate(func(p fileParams) (*ipc.ErrorLogFile, error) {
		ef, err := ipc.CreateErrorLog(string(p.Dir), name, length, append(p.Options, opts...)...)
		if err != nil {
			return nil, fmt.Errorf("dutyfx: error log %s: %w", name, err)
		}
		if err := keep(p, ef.File, ef.Close); err != nil {
			return nil, err
		}
		return ef, nil
	}, fx.ResultTags(Named(name))))
}
