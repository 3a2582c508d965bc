package zmtp

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Throughput of 32-byte messages over loopback TCP with CURVE, against
// NULL and against libzmq's own CURVE measured in the same run (pyzmq,
// both ends in one process). Not a test: run with -bench.
func BenchmarkCurveThroughput(b *testing.B) {
	msg := make([]byte, 32)
	run := func(b *testing.B, curve bool) {
		var pull, push *Socket
		if curve {
			sk, ck := newCurvePair(b), newCurvePair(b)
			pull = newSocket(b, Pull, Options{HWM: 10000, Curve: curveOpts(sk, true, CurveKey{}, ck.pub)})
			push = newSocket(b, Push, Options{HWM: 10000, Curve: curveOpts(ck, false, sk.pub)})
		} else {
			pull = newSocket(b, Pull, Options{HWM: 10000})
			push = newSocket(b, Push, Options{HWM: 10000})
		}
		if err := push.Connect(bind(b, pull, "tcp://127.0.0.1:0")); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(msg)))
		b.ReportAllocs()
		b.ResetTimer()
		start := time.Now()
		go func() {
			for range b.N {
				if push.SendContext(context.Background(), msg) != nil {
					return
				}
			}
		}()
		var m Message
		for range b.N {
			if err := pull.Recv(context.Background(), &m); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msg/s")
	}
	b.Run("duty-null", func(b *testing.B) { run(b, false) })
	b.Run("duty-curve", func(b *testing.B) { run(b, true) })
	b.Run("libzmq-curve", func(b *testing.B) {
		if exec.Command("/usr/bin/python3", "-c", "import zmq").Run() != nil {
			b.Skip("no libzmq here: /usr/bin/python3 without the zmq module (python3-zmq)")
		}
		out, err := exec.Command("/usr/bin/python3", "-c", libzmqCurveBench, strconv.Itoa(b.N)).Output()
		if err != nil {
			b.Fatal(err)
		}
		secs, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(b.N)/secs, "msg/s")
	})
}

// libzmqCurveBench sends argv[1] messages of 32 bytes PUSH to PULL over
// loopback TCP with CURVE and prints the seconds from the first send to
// the last receive.
const libzmqCurveBench = `
import sys, threading, time, zmq
n = int(sys.argv[1])
ctx = zmq.Context()
spub, ssec = zmq.curve_keypair()
cpub, csec = zmq.curve_keypair()
pull = ctx.socket(zmq.PULL)
pull.curve_server = True
pull.curve_publickey, pull.curve_secretkey = spub, ssec
pull.rcvhwm = 10000
port = pull.bind_to_random_port("tcp://127.0.0.1")
push = ctx.socket(zmq.PUSH)
push.curve_serverkey, push.curve_publickey, push.curve_secretkey = spub, cpub, csec
push.sndhwm = 10000
push.connect("tcp://127.0.0.1:%d" % port)
push.send(b"w"); pull.recv()
msg = bytes(32)
def send():
    for _ in range(n):
        push.send(msg)
t = threading.Thread(target=send)
start = time.perf_counter()
t.start()
for _ in range(n):
    pull.recv()
print(time.perf_counter() - start, flush=True)
t.join()
push.close(linger=0); pull.close(linger=0); ctx.term()
`
