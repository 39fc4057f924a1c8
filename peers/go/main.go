// schedlab-peer-go: schedlab's benchmark programs as goroutines and channels, the Go
// peer of `schedlab bench`. Prints a JSON array of rows {bench, runtime, policy, value,
// unit} on stdout and progress on stderr.
//
//	go build -o target/peers/schedlab-peer-go ./peers/go
//	target/peers/schedlab-peer-go [-quick] [-only SUBSTR]
//
// The programs and sizes mirror crates/bench (programs.rs, Scale::quick/full):
// ping-pong over two unbuffered channels, local dispatch with runtime.Gosched,
// spawning empty goroutines joined by a WaitGroup, and the Chat and hackbench
// topologies with buffered channels (Go has no unbounded channel; the pipelines are
// acyclic, so a bound cannot deadlock them), and wake-to-run latency among CPU hogs.
// GOMAXPROCS is 2 unless set.
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
	"time"
)

type row struct {
	Bench   string  `json:"bench"`
	Runtime string  `json:"runtime"`
	Policy  string  `json:"policy"`
	Value   float64 `json:"value"`
	Unit    string  `json:"unit"`
}

type scale struct {
	budget          time.Duration
	reps            int
	rooms, messages int
	groups, loops   int
}

const (
	users  = 20
	fds    = 20
	chunk  = 64
	warmup = 2000
	buffer = 1024
)

// pingpong: two goroutines bouncing a counter over two unbuffered channels.
func pingpong(budget time.Duration) float64 {
	toPong, toPing := make(chan uint64), make(chan uint64)
	go func() {
		for x := range toPong {
			toPing <- x + 1
		}
	}()
	var x uint64
	for i := 0; i < warmup; i++ {
		toPong <- x
		x = <-toPing
	}
	start := time.Now()
	var n uint64
	for time.Since(start) < budget {
		for i := 0; i < chunk; i++ {
			toPong <- x
			x = <-toPing
		}
		n += chunk
	}
	ns := float64(time.Since(start).Nanoseconds()) / float64(n)
	close(toPong)
	if x != warmup+n {
		panic("pingpong lost a message")
	}
	return ns
}

// localDispatch: one goroutine calling runtime.Gosched in a loop.
func localDispatch(budget time.Duration) float64 {
	for i := 0; i < warmup; i++ {
		runtime.Gosched()
	}
	start := time.Now()
	var n uint64
	for time.Since(start) < budget {
		for i := 0; i < chunk*16; i++ {
			runtime.Gosched()
		}
		n += chunk * 16
	}
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}

// spawn: batches of 1000 empty goroutines joined by a WaitGroup.
func spawn(budget time.Duration) float64 {
	batch := func() {
		var wg sync.WaitGroup
		wg.Add(1000)
		for i := 0; i < 1000; i++ {
			go func() { wg.Done() }()
		}
		wg.Wait()
	}
	batch()
	start := time.Now()
	var n uint64
	for time.Since(start) < budget {
		batch()
		n += 1000
	}
	return float64(n) / time.Since(start).Seconds()
}

// chat: per user client_send -> server_receive -> broadcast to the other users'
// server_send -> client_receive (crates/workloads/src/chat.rs).
func chat(rooms, m int) float64 {
	n := rooms * users
	fanout := m * (users - 1)
	start := time.Now()
	c2s, queue, s2c := make([]chan uint64, n), make([]chan uint64, n), make([]chan uint64, n)
	for u := 0; u < n; u++ {
		c2s[u], queue[u], s2c[u] = make(chan uint64, buffer), make(chan uint64, buffer), make(chan uint64, buffer)
	}
	var others, receivers sync.WaitGroup
	delivered := make([][1]uint64, n)
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
			for i := 0; i < fanout; i++ {
				<-s2c[u]
				delivered[u][0]++
			}
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
	secs := time.Since(start).Seconds()
	others.Wait()
	var total uint64
	for _, d := range delivered {
		total += d[0]
	}
	if total != uint64(n*fanout) {
		panic("chat lost a message")
	}
	return float64(total) / secs
}

// hackbench: groups of 20 senders each sending `loops` rounds to 20 receivers.
func hackbench(groups, loops int) float64 {
	start := time.Now()
	chans := make([]chan uint64, groups*fds)
	for i := range chans {
		chans[i] = make(chan uint64, buffer)
	}
	var receivers, senders sync.WaitGroup
	got := make([][1]uint64, groups*fds)
	for r := range chans {
		receivers.Add(1)
		go func(r int) {
			defer receivers.Done()
			for i := 0; i < fds*loops; i++ {
				<-chans[r]
				got[r][0]++
			}
		}(r)
	}
	for s := 0; s < groups*fds; s++ {
		senders.Add(1)
		go func(g int) {
			defer senders.Done()
			outs := chans[g*fds : (g+1)*fds]
			for i := 0; i < loops; i++ {
				for _, c := range outs {
					c <- uint64(i)
				}
			}
		}(s / fds)
	}
	receivers.Wait()
	secs := time.Since(start).Seconds()
	senders.Wait()
	var total uint64
	for _, g := range got {
		total += g[0]
	}
	if total != uint64(groups*fds*fds*loops) {
		panic("hackbench lost a message")
	}
	return float64(total) / secs
}

// wakeLatency: 10 hogs per P compute in 100 µs chunks (a spin on the clock) and call
// runtime.Gosched between chunks; a probe goroutine waits on a channel, a driver
// goroutine (Go has no thread outside its scheduler) sends it time.Now() every 5 ms
// for d, and the probe records the time from the send to its run
// (crates/bench/src/wake_latency.rs). Returns p50, p99, p99.9 and max in ns, the
// probes that ran (panics unless every probe sent ran) and the hog count.
func wakeLatency(d time.Duration) ([4]float64, int, int) {
	const chunk, period = 100 * time.Microsecond, 5 * time.Millisecond
	hogs := 10 * runtime.GOMAXPROCS(0)
	probes := make(chan time.Time, 1<<16)
	done := make(chan []int64)
	go func() {
		var lat []int64
		for t := range probes {
			lat = append(lat, max(time.Since(t).Nanoseconds(), 1))
		}
		done <- lat
	}()
	var stop atomic.Bool
	var wg sync.WaitGroup
	for i := 0; i < hogs; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				t := time.Now()
				for time.Since(t) < chunk {
				}
				runtime.Gosched()
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	sent := 0
	for {
		next := start.Add(period * time.Duration(sent+1))
		if next.After(start.Add(d)) {
			break
		}
		time.Sleep(time.Until(next))
		probes <- time.Now()
		sent++
	}
	close(probes)
	lat := <-done
	stop.Store(true)
	wg.Wait()
	if sent == 0 || len(lat) != sent {
		panic(fmt.Sprintf("wake latency: %d probes sent, %d ran", sent, len(lat)))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(x float64) float64 {
		i := int(math.Ceil(x*float64(len(lat)))) - 1
		return float64(lat[min(max(i, 0), len(lat)-1)])
	}
	return [4]float64{q(0.5), q(0.99), q(0.999), float64(lat[len(lat)-1])}, len(lat), hogs
}

func median(reps int, f func() float64) float64 {
	v := make([]float64, reps)
	for i := range v {
		v[i] = f()
	}
	sort.Float64s(v)
	if reps%2 == 1 {
		return v[reps/2]
	}
	return (v[reps/2-1] + v[reps/2]) / 2
}

func main() {
	quick := flag.Bool("quick", false, "CI sizes")
	only := flag.String("only", "", "run only benches whose name (or the runtime name 'go') contains this")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "schedlab-peer-go: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(2)
	}
	s := scale{budget: time.Second, reps: 5, rooms: 10, messages: 500, groups: 10, loops: 500}
	wakeRun := time.Second
	if *quick {
		s = scale{budget: 250 * time.Millisecond, reps: 3, rooms: 4, messages: 200, groups: 4, loops: 200}
		wakeRun = 300 * time.Millisecond
	}
	policy := fmt.Sprintf("GOMAXPROCS=%d", runtime.GOMAXPROCS(0))
	rows := []row{}
	run := func(bench, pol, unit string, f func() float64) {
		if *only != "" && !strings.Contains(bench, *only) && !strings.Contains("go", *only) {
			return
		}
		fmt.Fprintf(os.Stderr, "  %s on go %s\n", bench, pol)
		rows = append(rows, row{bench, "go", pol, f(), unit})
	}
	noPlace := policy + " (no placement)"
	run("pingpong-same-worker", noPlace, "ns/round-trip", func() float64 { return pingpong(s.budget) })
	run("pingpong-cross-worker", noPlace, "ns/round-trip", func() float64 { return pingpong(s.budget) })
	run("local-dispatch", policy+" Gosched", "ns/dispatch", func() float64 { return localDispatch(s.budget) })
	run("spawn", policy, "tasks/s", func() float64 { return spawn(s.budget) })
	run("chat", policy, "messages/s", func() float64 {
		return median(s.reps, func() float64 { return chat(s.rooms, s.messages) })
	})
	run("hackbench", policy, "messages/s", func() float64 {
		return median(s.reps, func() float64 { return hackbench(s.groups, s.loops) })
	})
	wakeBenches := []string{"wake-latency-p50", "wake-latency-p99", "wake-latency-p99.9", "wake-latency-max"}
	wanted := func(bench string) bool {
		return *only == "" || strings.Contains(bench, *only) || strings.Contains("go", *only)
	}
	if wanted(wakeBenches[0]) || wanted(wakeBenches[1]) || wanted(wakeBenches[2]) || wanted(wakeBenches[3]) {
		procs := runtime.GOMAXPROCS(0)
		fmt.Fprintf(os.Stderr, "  wake-latency on go %s (%d workers, %d hogs of 100µs chunks, a probe every 5ms for %v)\n",
			policy, procs, 10*procs, wakeRun)
		v, ran, hogs := wakeLatency(wakeRun)
		config := fmt.Sprintf("%s, %d workers, %d hogs, %d probes", policy, procs, hogs, ran)
		for i, b := range wakeBenches {
			if wanted(b) {
				rows = append(rows, row{b, "go", config, v[i], "ns/wake"})
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
