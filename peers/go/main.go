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
// acyclic, so a bound cannot deadlock them). GOMAXPROCS is 2 unless set.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
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
	if *quick {
		s = scale{budget: 250 * time.Millisecond, reps: 3, rooms: 4, messages: 200, groups: 4, loops: 200}
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
