package dutyfx_test

import (
	"context"
	"fmt"

	"go.uber.org/fx"

	"github.com/dutyrt/duty/dutyfx"
	"github.com/dutyrt/duty/runner"
)

// ticker works until the application stops it.
type ticker struct{ role string }

func (t *ticker) RoleName() string     { return t.role }
func (t *ticker) OnStart() error       { return nil }
func (t *ticker) OnClose() error       { fmt.Println("closed", t.role); return nil }
func (t *ticker) DoWork() (int, error) { return 0, nil }

func Example() {
	app := fx.New(
		fx.NopLogger,
		dutyfx.Runners,
		fx.Supply(dutyfx.Config{Idle: map[string]string{"a": "sleep-ns:10000"}, DefaultIdle: "backoff"}),
		fx.Provide(
			dutyfx.AsAgent(func() *ticker { return &ticker{role: "a"} }),
			dutyfx.AsAgent(func() *ticker { return &ticker{role: "b"} }),
		),
		fx.Invoke(func(g *runner.Group) {
			for _, r := range g.Runners() {
				fmt.Println("will run", r.RoleName())
			}
		}),
	)
	if err := app.Start(context.Background()); err != nil {
		panic(err)
	}
	if err := app.Stop(context.Background()); err != nil {
		panic(err)
	}
	// Output:
	// will run a
	// will run b
	// closed b
	// closed a
}
