// schedlab-peer-go: schedlab's benchmark programs as goroutines and channels, the Go
// peer of `schedlab bench`. Runs one repetition of every program (`schedlab bench`
// runs it once per round, interleaved with the other runtimes, and aggregates) and
// prints a JSON array of rows {bench, runtime, policy, value, unit, channel, reps,
// min, max, cpu_per_op, pin} on stdout and progress on stderr. cpu_per_op is the process
// CPU time (getrusage(RUSAGE_SELF)) around the timed region, in the row's unit
// (CPU ns per op, or ops per CPU-second for rates). Every program checks its result
// (round trips, message counts and payload sums, goroutines run) and panics otherwise.
//
//	go build -o target/peers/schedlab-peer-go ./peers/go
//	target/peers/schedlab-peer-go [-quick] [-only SUBSTR] [-pin all|none]
//
// The programs and sizes mirror crates/bench (programs.rs, Scale::quick/full):
// ping-pong over two unbuffered channels, local dispatch with runtime.Gosched,
// spawning empty goroutines each joined through its own done channel (a join handle:
// the Rust programs await one JoinHandle per task), and the Chat and hackbench
// topologies. Their channels are unbounded in effect, like the Rust ones: Go has no
// unbounded channel, so each is buffered for every message that will ever be sent on
// it (a send never blocks). GOMAXPROCS is 2 unless set.
//
// -pin only labels the rows: Go cannot pin its threads, so `schedlab bench --pin all`
// restricts this whole process to the 2 CPUs of schedlab's workers before exec
// (sched_setaffinity, like taskset); with -pin none no affinity is set.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

type row struct {
	Bench    string  `json:"bench"`
	Runtime  string  `json:"runtime"`
	Policy   string  `json:"policy"`
	Value    float64 `json:"value"`
	Unit     string  `json:"unit"`
	Channel  string  `json:"channel"`
	Reps     int     `json:"reps"`
	Min      float64 `json:"min"`
	Max      float64 `json:"max"`
	CPUPerOp float64 `json:"cpu_per_op"`
	Pin      string  `json:"pin"`
}

// measure: one repetition's value and CPU time in the row's unit.
type measure struct{ value, cpu float64 }

func cpuNs() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

type stopwatch struct {
	start time.Time
	cpu   int64
}

func startWatch() stopwatch { return stopwatch{time.Now(), cpuNs()} }

func (w stopwatch) perOp(n uint64) measure {
	wall := float64(time.Since(w.start).Nanoseconds())
	cpu := float64(max(cpuNs()-w.cpu, 1))
	return measure{wall / float64(n), cpu / float64(n)}
}

func (w stopwatch) rate(n uint64) measure {
	wall := time.Since(w.start).Seconds()
	cpu := float64(max(cpuNs()-w.cpu, 1)) / 1e9
	return measure{float64(n) / wall, float64(n) / cpu}
}

// warmEnough: stop warming up after `warmup` iterations or a quarter of the budget.
func warmEnough(i uint64, t0 time.Time, budget time.Duration) bool {
	return i >= warmup || (i%chunk == 0 && time.Since(t0) >= budget/4)
}

type scale struct {
	budget          time.Duration
	rooms, messages int
	groups, loops   int
}

const (
	users  = 20
	fds    = 20
	chunk  = 64
	warmup = 2000
	// Goroutines per spawn batch (SPAWN_BATCH of crates/bench).
	spawnBatch = 1000
)

// pingpong: two goroutines bouncing a counter over two unbuffered channels.
func pingpong(budget time.Duration) measure {
	toPong, toPing := make(chan uint64), make(chan uint64)
	seen := make(chan uint64)
	go func() {
		var n uint64
		for x := range toPong {
			n++
			toPing <- x + 1
		}
		seen <- n
	}()
	var x uint64
	t0 := time.Now()
	for !warmEnough(x, t0, budget) {
		toPong <- x
		x = <-toPing
	}
	warm := x
	w := startWatch()
	var n uint64
	for time.Since(w.start) < budget {
		for i := 0; i < chunk; i++ {
			toPong <- x
			x = <-toPing
		}
		n += chunk
	}
	m := w.perOp(n)
	close(toPong)
	if x != warm+n || <-seen != warm+n {
		panic("pingpong lost a message")
	}
	return m
}

// localDispatch: one goroutine calling runtime.Gosched in a loop.
func localDispatch(budget time.Duration) measure {
	t0 := time.Now()
	for i := uint64(0); !warmEnough(i, t0, budget); i++ {
		runtime.Gosched()
	}
	w := startWatch()
	var n uint64
	for time.Since(w.start) < budget {
		for i := 0; i < chunk*16; i++ {
			runtime.Gosched()
		}
		n += chunk * 16
	}
	return w.perOp(n)
}

// spawn: batches of 1000 empty goroutines, each returning 1 through its own done
// channel (buffered 1: a join handle), received in spawn order and summed, as the
// Rust program awaits its 1000 JoinHandles in order.
func spawn(budget time.Duration) measure {
	var ran atomic.Uint64
	handles := make([]chan uint64, spawnBatch)
	batch := func() uint64 {
		for i := range handles {
			done := make(chan uint64, 1)
			handles[i] = done
			go func() { ran.Add(1); done <- 1 }()
		}
		var sum uint64
		for _, h := range handles {
			sum += <-h
		}
		return sum
	}
	joined := batch()
	w := startWatch()
	var n uint64
	for time.Since(w.start) < budget {
		joined += batch()
		n += spawnBatch
	}
	m := w.rate(n)
	if ran.Load() != n+spawnBatch || joined != n+spawnBatch {
		panic(fmt.Sprintf("spawn: %d goroutines ran, %d joined, %d spawned", ran.Load(), joined, n+spawnBatch))
	}
	return m
}

// chat: per user client_send -> server_receive -> broadcast to the other users'
// server_send -> client_receive (crates/workloads/src/chat.rs).
func chat(rooms, m int) measure {
	n := rooms * users
	fanout := m * (users - 1)
	w := startWatch()
	c2s, queue, s2c := make([]chan uint64, n), make([]chan uint64, n), make([]chan uint64, n)
	// Unbounded in effect: each channel holds every message ever sent on it (m to a
	// server_receive, fanout through a user's queue and to its client).
	for u := 0; u < n; u++ {
		c2s[u], queue[u], s2c[u] = make(chan uint64, m), make(chan uint64, fanout), make(chan uint64, fanout)
	}
	var others, receivers sync.WaitGroup
	// One result per receiver, written once at its end (no shared counter lines).
	delivered, sums := make([]uint64, n), make([]uint64, n)
	for u := 0; u < n; u++ {
		others.Add(2)
		go func(u int) { // server_send
			defer others.Done()
			for i := 0; i < fanout; i++ {
				s2c[u] <- <-queue[u]
			}
		}(u)
		go func(u int) { // server_receive
			defer others.Done()
			first := u / users * users
			for i := 0; i < m; i++ {
				x := <-c2s[u]
				for v := first; v < first+users; v++ {
					if v != u {
						queue[v] <- x
					}
				}
			}
		}(u)
	}
	for u := 0; u < n; u++ {
		receivers.Add(1)
		go func(u int) { // client_receive
			defer receivers.Done()
			var got, sum uint64
			for i := 0; i < fanout; i++ {
				sum += <-s2c[u]
				got++
			}
			delivered[u], sums[u] = got, sum
		}(u)
	}
	for u := 0; u < n; u++ {
		others.Add(1)
		go func(u int) { // client_send
			defer others.Done()
			for i := 0; i < m; i++ {
				c2s[u] <- uint64(u*m + i)
			}
		}(u)
	}
	receivers.Wait()
	var total, sum uint64
	for u := range delivered {
		total += delivered[u]
		sum += sums[u]
	}
	res := w.rate(total)
	others.Wait()
	// Every other user of the room receives user u's payloads u*m+i, i < m.
	var want uint64
	mm := uint64(m)
	for u := uint64(0); u < uint64(n); u++ {
		want += (u*mm*mm + mm*(mm-1)/2) * (users - 1)
	}
	if total != uint64(n*fanout) || sum != want {
		panic(fmt.Sprintf("chat: %d deliveries (want %d), payload sum %d (want %d)", total, n*fanout, sum, want))
	}
	return res
}

// hackbench: groups of 20 senders each sending `loops` rounds to 20 receivers.
func hackbench(groups, loops int) measure {
	w := startWatch()
	chans := make([]chan uint64, groups*fds)
	// Unbounded in effect: each receiver's channel holds all fds*loops messages it gets.
	for i := range chans {
		chans[i] = make(chan uint64, fds*loops)
	}
	var receivers, senders sync.WaitGroup
	got, sums := make([]uint64, groups*fds), make([]uint64, groups*fds)
	for r := range chans {
		receivers.Add(1)
		go func(r int) {
			defer receivers.Done()
			var n, sum uint64
			for i := 0; i < fds*loops; i++ {
				sum += <-chans[r]
				n++
			}
			got[r], sums[r] = n, sum
		}(r)
	}
	for s := 0; s < groups*fds; s++ {
		senders.Add(1)
		go func(s int) {
			defer senders.Done()
			g := s / fds
			outs := chans[g*fds : (g+1)*fds]
			for i := 0; i < loops; i++ {
				for _, c := range outs {
					c <- uint64(s*loops + i)
				}
			}
		}(s)
	}
	receivers.Wait()
	var total, sum uint64
	for r := range got {
		total += got[r]
		sum += sums[r]
	}
	res := w.rate(total)
	senders.Wait()
	// Sender s sends s*loops+i (i < loops) to each of the fds receivers of its group.
	var want uint64
	l := uint64(loops)
	for s := uint64(0); s < uint64(groups*fds); s++ {
		want += (s*l*l + l*(l-1)/2) * fds
	}
	if total != uint64(groups*fds*fds*loops) || sum != want {
		panic(fmt.Sprintf("hackbench: %d messages (want %d), payload sum %d (want %d)", total, groups*fds*fds*loops, sum, want))
	}
	return res
}

func main() {
	quick := flag.Bool("quick", false, "CI sizes")
	only := flag.String("only", "", "run only benches whose name (or the runtime name 'go') contains this")
	pin := flag.String("pin", "all", "label of the rows: all (the parent set this process's affinity to 2 CPUs) or none")
	flag.Parse()
	if *pin != "all" && *pin != "none" {
		fmt.Fprintf(os.Stderr, "schedlab-peer-go: -pin %q: expected all or none\n", *pin)
		os.Exit(2)
	}
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "schedlab-peer-go: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	// Say which CPUs this process may use (the affinity `schedlab bench --pin all` set).
	if status, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, l := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(l, "Cpus_allowed_list:") {
				fmt.Fprintf(os.Stderr, "  go peer: -pin %s, CPUs allowed: %s\n", *pin, strings.TrimSpace(l[len("Cpus_allowed_list:"):]))
			}
		}
	}
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(2)
	}
	// Scale::full / Scale::quick of crates/bench (one repetition).
	s := scale{budget: 200 * time.Millisecond, rooms: 10, messages: 200, groups: 10, loops: 200}
	if *quick {
		s = scale{budget: 20 * time.Millisecond, rooms: 2, messages: 50, groups: 2, loops: 50}
	}
	policy := fmt.Sprintf("GOMAXPROCS=%d", runtime.GOMAXPROCS(0))
	rows := []row{}
	run := func(bench, pol, unit, channel string, f func() measure) {
		if *only != "" && !strings.Contains(bench, *only) && !strings.Contains("go", *only) {
			return
		}
		fmt.Fprintf(os.Stderr, "  %s on go %s\n", bench, pol)
		m := f()
		rows = append(rows, row{bench, "go", pol, m.value, unit, channel, 1, m.value, m.value, m.cpu, *pin})
	}
	noPlace := policy + " (no placement)"
	pp := func() measure { return pingpong(s.budget) }
	run("pingpong-same-worker", noPlace, "ns/round-trip", "go chan", pp)
	run("pingpong-cross-worker", noPlace, "ns/round-trip", "go chan", pp)
	run("local-dispatch", policy+" Gosched", "ns/dispatch", "none", func() measure { return localDispatch(s.budget) })
	run("spawn", policy+" join per task", "tasks/s", "none", func() measure { return spawn(s.budget) })
	run("chat", policy, "messages/s", "go chan", func() measure { return chat(s.rooms, s.messages) })
	run("hackbench", policy, "messages/s", "go chan", func() measure { return hackbench(s.groups, s.loops) })
	// A JSON array, one row per line, like the Rust side.
	lines := make([]string, len(rows))
	for i, r := range rows {
		b, err := json.Marshal(r)
		if err != nil {
			panic(err)
		}
		lines[i] = "  " + string(b)
	}
	if len(lines) == 0 {
		fmt.Println("[]")
		return
	}
	fmt.Printf("[\n%s\n]\n", strings.Join(lines, ",\n"))
}
