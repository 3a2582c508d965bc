package natsbridge

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
)

// runCluster starts three JetStream servers routed into one cluster and
// waits until JetStream has a meta leader.
func runCluster(t *testing.T) []*server.Server {
	t.Helper()
	ports := make([]int, 3)
	for i := range ports { // free loopback ports for the routes
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		ports[i] = l.Addr().(*net.TCPAddr).Port
		require.NoError(t, l.Close())
	}
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	var nodes []*server.Server
	for i := range 3 {
		o := jsServerOptions(t)
		o.ServerName = fmt.Sprintf("n%d", i)
		o.Cluster = server.ClusterOpts{Name: "duty", Host: "127.0.0.1", Port: ports[i]}
		o.Routes = server.RoutesFromStr(strings.Join(routes, ","))
		nodes = append(nodes, startServer(t, o))
	}
	for _, s := range nodes {
		require.True(t, s.ReadyForConnections(10*time.Second), "server not ready")
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		leader := false
		for _, s := range nodes {
			leader = leader || s.JetStreamIsLeader()
		}
		if leader {
			return nodes
		}
		require.True(t, time.Now().Before(deadline), "no JetStream meta leader")
		time.Sleep(10 * time.Millisecond)
	}
}

// A three-node cluster, a stream of three replicas, and the node both
// bridges are connected to is shut down mid-stream: the clients fail over
// to the others and every message arrives exactly once, in order.
func TestJetStreamClusterNodeLost(t *testing.T) {
	nodes := runCluster(t)
	var urls []string
	for _, s := range nodes {
		urls = append(urls, s.ClientURL())
	}
	cfg := jsConfig(nodes[0], "cluster")
	cfg.URL = strings.Join(urls, ",")
	cfg.Options = append(cfg.Options, nats.DontRandomize()) // both on n0 first
	cfg.JetStream.Replicas = 3
	cfg.BatchBytes = 4096
	src, dst := newMailboxMax(t, 1<<16, 1024), newMailbox(t, 1<<20)

	var out *Outbound
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; { // the stream needs its replicas' leader
		if out, err = NewOutbound(ctx(t), cfg, src); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.NoError(t, err)
	in, err := NewInbound(ctx(t), cfg, dst)
	require.NoError(t, err)
	require.Equal(t, nodes[0].ClientURL(), in.nc.ConnectedUrl())

	n := 4000
	f := &feeder{mb: src, upTo: n / 2}
	c := &checker{t: t, mb: dst}
	pump(t, func() bool { return c.next >= n/4 }, f, out, in, c)
	stopServer(nodes[0])
	f.upTo = n
	pump(t, func() bool { return c.next == n }, f, out, in, c)
	require.NoError(t, out.OnClose())
	require.NoError(t, in.OnClose())
	os, is := out.Stats(), in.Stats()
	require.Equal(t, int64(n), is.Delivered)
	require.GreaterOrEqual(t, os.Reconnects, int64(1))
	require.GreaterOrEqual(t, is.Reconnects, int64(1))
	require.Zero(t, is.Dropped+is.Rejected)
	t.Logf("out %+v", os)
	t.Logf("in  %+v", is)
}

// Core mode on the same cluster: when the node both bridges use goes, the
// batches it held are lost, and every loss shows as a gap in the source's
// sequences (Stats.LostMessages, Stats.LostBatches): delivered messages
// stay in order without duplicates, and every message up to the last batch
// the receiver saw is delivered, dropped at the full mailbox or counted
// lost, one by one (Delivered + Dropped + LostMessages, the package's
// reconciliation). Dropped is part of it: the client may hold the frames
// of a starved subscription and then deliver them in one burst larger than
// the mailbox, whose refused messages are dropped and counted.
func TestCoreClusterNodeLostCountsLosses(t *testing.T) {
	nodes := runCluster(t)
	var urls []string
	for _, s := range nodes {
		urls = append(urls, s.ClientURL())
	}
	cfg := testConfig(nodes[0], "corecluster")
	cfg.URL = strings.Join(urls, ",")
	cfg.Options = append(cfg.Options, nats.DontRandomize())
	cfg.BatchBytes = 4096
	src, dst := newMailboxMax(t, 1<<16, 1024), newMailbox(t, 1<<20)
	in, err := NewInbound(ctx(t), cfg, dst)
	require.NoError(t, err)
	out, err := NewOutbound(ctx(t), cfg, src)
	require.NoError(t, err)

	n := 4000
	// Before the node goes, at most n messages, which dst holds all of:
	// the node is lost mid-stream, not after a burst ran past the end.
	f := &feeder{mb: src, upTo: n}
	c := &checker{t: t, mb: dst, allowGaps: true}
	pump(t, func() bool { return c.next >= n/4 }, f, out, in, c)
	stopServer(nodes[0]) // with batches in flight
	// Until a message sent after the node went arrives: every batch before
	// its batch was delivered, dropped or is a counted gap. The feeder
	// sends on until then: messages sent while the bridges fail over are
	// lost (counted), so a bound the feeder could reach before the
	// receiver is back would leave the pump waiting for a message that is
	// never sent.
	after := f.sent
	f.upTo = after + 100*n
	pump(t, func() bool { return c.next > after }, f, out, in, c)
	require.NoError(t, out.OnClose())
	require.NoError(t, in.OnClose())
	c.DoWork() // what the callback delivered before the close
	st := in.Stats()
	require.Equal(t, dst.Stats().Delivered, st.Delivered)
	last, ok := in.sources.get(out.source)
	require.True(t, ok)
	seen := int64(last.next - 1) // the source's messages up to the last batch seen
	require.LessOrEqual(t, last.next, out.next, "the receiver saw no message the sender did not batch")
	require.Equal(t, seen, st.Delivered+st.Dropped+st.LostMessages,
		"every message up to the last batch seen is delivered, dropped or counted lost")
	require.LessOrEqual(t, int64(c.next), seen)
	require.LessOrEqual(t, int64(c.next)-st.Delivered, st.Dropped+st.LostMessages,
		"the messages below the last one delivered that did not arrive are counted")
	if st.Dropped == 0 {
		require.Equal(t, int64(c.next), seen, "without drops the last batch seen was delivered")
	}
	if st.LostMessages > 0 {
		require.Positive(t, st.LostBatches)
	}
	t.Logf("in %+v", st)
}
