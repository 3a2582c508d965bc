package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/message"
	"github.com/dutyrt/duty/runner"
)

// crossProcess runs the client here and the server in a child process
// (server makes its command: this binary again, -role server): each
// process creates the mailbox it drains as a file, and the registries
// resolve the other's by name.
func crossProcess(ctx context.Context, n int, out io.Writer, server func(dir string) *exec.Cmd) error {
	dir, err := os.MkdirTemp("", "reqreply-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	clientBox, clientFile, err := ipc.CreateMailbox(dir, "client", mailbox.Config{})
	if err != nil {
		return err
	}
	defer clientFile.Close()
	child := server(dir)
	child.Stdout, child.Stderr = os.Stderr, os.Stderr
	if err := child.Start(); err != nil {
		return err
	}
	reg := message.NewRegistry(ipc.Dir(dir, ipc.WithWaitForFile()))
	defer reg.Close()
	serverAddr, _ := message.AddressOf("server")
	serverBox, err := reg.Lookup(ctx, serverAddr) // waits for the child's file
	if err != nil {
		_ = child.Process.Kill()
		_ = child.Wait()
		return err
	}
	self, _ := message.AddressOf("client")
	c, err := newClient(clientBox, serverBox, self, n, out)
	if err != nil {
		return err
	}
	err = runGroup(ctx, runner.Member{Agent: c})
	_ = serverBox.Send(typeStop, nil) // the client is done: so is the server
	if err != nil {
		_ = child.Process.Kill()
	}
	if werr := child.Wait(); err == nil && werr != nil {
		err = fmt.Errorf("server process: %w", werr)
	}
	return err
}

// typeStop asks the server process to end.
const typeStop int32 = 99

// serveProcess is the child: the server agent on its own mailbox file,
// replying through a registry of the directory's files.
func serveProcess(ctx context.Context, dir string) error {
	in, f, err := ipc.CreateMailbox(dir, "server", mailbox.Config{})
	if err != nil {
		return err
	}
	defer f.Close()
	s := newServer(in, message.NewRegistry(ipc.Dir(dir)))
	s.router.Fallback(func(m *mailbox.Message) error {
		if m.TypeID() == typeStop {
			s.stop = true
		}
		return nil
	})
	return runGroup(ctx, runner.Member{Agent: s})
}
