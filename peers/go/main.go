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
// topologies, and wake-to-run latency among 10x oversubscribed CPU hogs
// (crates/bench/src/wake_latency.rs). The Chat and hackbench channels are unbounded
// in effect, like the Rust ones: Go has no unbounded channel, so each is buffered for
// every message that will ever be sent on it (a send never blocks). GOMAXPROCS is 2
// unless set.
//
// -pin only labels the rows: Go cannot pin its threads, so `schedlab bench --pin all`
// restricts this whole process to the 2 CPUs of schedlab's workers before exec
// (sched_setaffinity, like taskset); with -pin none no affinity is set.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

type row struct {
	Bench   string  `json:"bench"`
	Runtime string  `json:"runtime"`
	Policy  string  `json:"policy"`
	Value   float64 `json:"value"`
	Unit    string  `json:"unit"`
	Channel string  `json:"channel"`
	Reps    int     `json:"reps"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	// nil (JSON null) where not measured, as on the Rust side (wake-latency rows).
	CPUPerOp *float64 `json:"cpu_per_op"`
	Pin      string   `json:"pin"`
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

// Wake-latency scale (WakeScale::full / quick of crates/bench/src/wake_latency.rs).
type wakeScale struct {
	duration, period, chunk, warmup time.Duration
	hogsPerP                        int
}

// wakeResult: p50, p99, p99.9 and max in ns, and what ran.
type wakeResult struct {
	q               [4]float64
	hogs, sent, ran int
	chunks          uint64
}

// wakeLatency: the program of crates/bench/src/wake_latency.rs. hogsPerP hogs per P
// compute in chunks (a spin on the clock) and call runtime.Gosched between chunks; a
// probe goroutine blocks on a channel, a driver sends it time.Now() every period for
// duration, and the probe records the time from the send to its run. Go has no thread
// outside its scheduler, so the driver is a goroutine: its send readies the probe in
// the driver's own P (runnext) and the driver then sleeps. That is the program of the
// Rust runtimes' wake-latency-inside rows (a driver task on the runtime's timer), and
// Go's rows are those. Panics unless every probe sent ran and the hogs ran.
func wakeLatency(s wakeScale) wakeResult {
	hogs := s.hogsPerP * runtime.GOMAXPROCS(0)
	// Buffered for every probe (Go has no unbounded channel); a send to a blocked
	// probe still hands the value over directly and readies it.
	probes := make(chan time.Time, int(s.duration/s.period)+1)
	done := make(chan []int64)
	go func() {
		var lat []int64
		for t := range probes {
			lat = append(lat, max(time.Since(t).Nanoseconds(), 1))
		}
		done <- lat
	}()
	var stop atomic.Bool
	chunks := make([]uint64, hogs) // one result per hog, written once at its end
	var wg sync.WaitGroup
	for i := 0; i < hogs; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var n uint64
			for !stop.Load() {
				t := time.Now()
				for time.Since(t) < s.chunk {
				}
				n++
				runtime.Gosched()
			}
			chunks[i] = n
		}(i)
	}
	time.Sleep(s.warmup)
	start := time.Now()
	sent := 0
	for {
		next := start.Add(s.period * time.Duration(sent+1))
		if next.After(start.Add(s.duration)) {
			break
		}
		time.Sleep(time.Until(next))
		probes <- time.Now()
		sent++
	}
	close(probes)
	// The last probes still run under load; then the hogs stop.
	lat := <-done
	stop.Store(true)
	wg.Wait()
	var total uint64
	for _, n := range chunks {
		total += n
	}
	if sent == 0 || len(lat) != sent || total == 0 {
		panic(fmt.Sprintf("wake latency: %d probes sent, %d ran, %d hog chunks", sent, len(lat), total))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(x float64) float64 {
		i := int(math.Ceil(x*float64(len(lat)))) - 1
		return float64(lat[min(max(i, 0), len(lat)-1)])
	}
	return wakeResult{[4]float64{q(0.5), q(0.99), q(0.999), float64(lat[len(lat)-1])}, hogs, sent, len(lat), total}
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
	ws := wakeScale{duration: time.Second, period: 5 * time.Millisecond, chunk: 100 * time.Microsecond,
		warmup: 20 * time.Millisecond, hogsPerP: 10}
	if *quick {
		ws.duration = 300 * time.Millisecond
	}
	policy := fmt.Sprintf("GOMAXPROCS=%d", runtime.GOMAXPROCS(0))
	rows := []row{}
	wanted := func(bench string) bool {
		return *only == "" || strings.Contains(bench, *only) || strings.Contains("go", *only)
	}
	run := func(bench, pol, unit, channel string, f func() measure) {
		if !wanted(bench) {
			return
		}
		fmt.Fprintf(os.Stderr, "  %s on go %s\n", bench, pol)
		m := f()
		rows = append(rows, row{bench, "go", pol, m.value, unit, channel, 1, m.value, m.value, &m.cpu, *pin})
	}
	noPlace := policy + " (no placement)"
	pp := func() measure { return pingpong(s.budget) }
	run("pingpong-same-worker", noPlace, "ns/round-trip", "go chan", pp)
	run("pingpong-cross-worker", noPlace, "ns/round-trip", "go chan", pp)
	run("local-dispatch", policy+" Gosched", "ns/dispatch", "none", func() measure { return localDispatch(s.budget) })
	run("spawn", policy+" join per task", "tasks/s", "none", func() measure { return spawn(s.budget) })
	run("chat", policy, "messages/s", "go chan", func() measure { return chat(s.rooms, s.messages) })
	run("hackbench", policy, "messages/s", "go chan", func() measure { return hackbench(s.groups, s.loops) })
	// names::WAKE_LATENCY_INSIDE (the driver is a goroutine): one run gives the four
	// rows (no CPU time, no channel column, like the Rust rows).
	wakeBenches := []string{"wake-latency-inside-p50", "wake-latency-inside-p99", "wake-latency-inside-p99.9", "wake-latency-inside-max"}
	if wanted(wakeBenches[0]) || wanted(wakeBenches[1]) || wanted(wakeBenches[2]) || wanted(wakeBenches[3]) {
		procs := runtime.GOMAXPROCS(0)
		fmt.Fprintf(os.Stderr, "  wake-latency on go %s (%d workers, %d hogs of %v chunks, a probe every %v for %v)\n",
			policy, procs, ws.hogsPerP*procs, ws.chunk, ws.period, ws.duration)
		r := wakeLatency(ws)
		config := fmt.Sprintf("%s, %d workers, %d hogs, %d probes", policy, procs, r.hogs, r.ran)
		for i, b := range wakeBenches {
			if wanted(b) {
				rows = append(rows, row{b, "go", config, r.q[i], "ns/wake", "none", 1, r.q[i], r.q[i], nil, *pin})
			}
		}
	}
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
