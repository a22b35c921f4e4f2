// Package redistest starts real redis-server processes for tests: a single
// server or a Redis Cluster, on free loopback ports, killed when the test
// ends. There are no mocks: a test without redis-server fails and says how
// to install it.
package redistest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Install is what a test without redis-server says.
const Install = "the redis tests need redis-server and redis-cli (Redis 7): apt-get install -y redis-server"

// Server is one redis-server process.
type Server struct {
	Port    int
	Addr    string // 127.0.0.1:Port
	DB      int    // the database Client and Options select (Shared's are not 0)
	dir     string
	cluster bool
	extra   []string // more redis-server arguments
	cmd     *exec.Cmd
	tb      testing.TB
	shared  bool // the test binary's shared server: Kill, Stop, Restart refuse it
}

// Check fails tb unless redis-server and redis-cli are installed.
func Check(tb testing.TB) {
	tb.Helper()
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			tb.Fatalf("%s not found: %s", bin, Install)
		}
	}
}

// Start starts a redis-server on a free loopback port; it is killed when
// the test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	return start(tb, false)
}

// StartWith is Start with more redis-server arguments (such as
// "--rename-command", "FCALL", "" for a server without Functions).
func StartWith(tb testing.TB, extra ...string) *Server {
	tb.Helper()
	return start(tb, false, extra...)
}

func start(tb testing.TB, cluster bool, extra ...string) *Server {
	Check(tb)
	s := &Server{Port: freePort(tb, cluster), dir: tb.TempDir(), cluster: cluster, extra: extra, tb: tb}
	s.Addr = "127.0.0.1:" + strconv.Itoa(s.Port)
	s.Restart()
	tb.Cleanup(s.Kill)
	return s
}

// The shared server: one redis-server per test binary, for the tests that
// neither kill, pause nor reconfigure their server, so that a -short run
// starts one process instead of one per test. Each test gets a database of
// its own on it (SELECT), emptied when handed out, so tests sharing it may
// run in parallel with any key names; what is server-wide (Functions,
// scripts, ACL users, configuration) is shared, so a test that changes it
// must not run in parallel with others.
var (
	sharedMu  sync.Mutex
	sharedSrv *Server
	sharedDB  int
)

// sharedDBs is how many databases the shared server has; test number i
// gets database 1 + i mod (sharedDBs-1).
const sharedDBs = 1024

// Shared returns the test binary's shared redis-server, started on first
// use, as seen from an empty database of its own for tb: its Client and
// Options select that database.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedSrv == nil {
		Check(tb)
		dir, err := os.MkdirTemp("", "redistest-shared-")
		if err != nil {
			tb.Fatal(err)
		}
		s := &Server{Port: freePort(tb, false), dir: dir, tb: tb, shared: true,
			extra: []string{"--databases", strconv.Itoa(sharedDBs)}}
		s.Addr = "127.0.0.1:" + strconv.Itoa(s.Port)
		s.Restart()
		sharedSrv = s
	}
	cp := *sharedSrv
	cp.tb = tb
	cp.DB = 1 + sharedDB%(sharedDBs-1)
	sharedDB++
	if _, err := cp.DoSeq([]string{"SELECT", strconv.Itoa(cp.DB)}, []string{"FLUSHDB", "SYNC"}); err != nil {
		tb.Fatalf("shared redis-server: emptying database %d: %v", cp.DB, err)
	}
	return &cp
}

// KillShared kills the shared server, if one was started.
func KillShared() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedSrv != nil {
		sharedSrv.kill()
		os.RemoveAll(sharedSrv.dir)
		sharedSrv = nil
	}
}

// Restart starts the server again on its port, empty (nothing is saved),
// after Kill; it waits until the server answers PING.
func (s *Server) Restart() {
	s.tb.Helper()
	if s.shared && s.cmd != nil {
		panic("redistest: Restart of the shared server")
	}
	args := []string{"--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", s.dir, "--daemonize", "no", "--loglevel", "warning"}
	if s.cluster {
		os.Remove(s.dir + "/nodes.conf")
		args = append(args, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "2000", "--repl-diskless-sync-delay", "0")
	}
	s.cmd = exec.Command("redis-server", append(args, s.extra...)...)
	s.cmd.SysProcAttr = procAttr()
	if err := s.cmd.Start(); err != nil {
		s.tb.Fatalf("redis-server: %v (%s)", err, Install)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := s.Do("PING"); err == nil {
			return
		}
		if time.Now().After(deadline) {
			s.kill()
			s.tb.Fatalf("redis-server on %s did not answer PING in 10s", s.Addr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Kill kills the server (also when stopped) and waits for it to exit.
func (s *Server) Kill() {
	if s.shared {
		panic("redistest: Kill of the shared server (use Start)")
	}
	s.kill()
}

func (s *Server) kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
}

// Stop pauses the server with SIGSTOP: it holds its connections and
// answers nothing until Continue.
func (s *Server) Stop() {
	if s.shared {
		panic("redistest: Stop of the shared server (use Start)")
	}
	s.cmd.Process.Signal(syscall.SIGSTOP)
}

// Continue resumes a server paused by Stop.
func (s *Server) Continue() { s.cmd.Process.Signal(syscall.SIGCONT) }

// Do sends one command on a fresh connection and returns the reply's
// first line (or a bulk reply's body), for harness use: PING, CLUSTER INFO.
func (s *Server) Do(args ...string) (string, error) { return s.DoSeq(args) }

// DoSeq sends commands on one fresh connection and returns the last reply
// as Do does (READONLY then GET, on a replica).
func (s *Server) DoSeq(cmds ...[]string) (string, error) {
	c, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	r := bufio.NewReader(c)
	var reply string
	for _, args := range cmds {
		if reply, err = roundTrip(c, r, args); err != nil {
			return "", err
		}
	}
	return reply, nil
}

func roundTrip(c net.Conn, r *bufio.Reader, args []string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	switch line[0] {
	case '-':
		return "", fmt.Errorf("%s", line[1:])
	case '$':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return "", nil
		}
		buf := make([]byte, n+2)
		if _, err := ioReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	return line[1:], nil
}

func ioReadFull(r *bufio.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Options returns go-redis options for a client of the server (its address
// and database).
func (s *Server) Options() *goredis.Options { return &goredis.Options{Addr: s.Addr, DB: s.DB} }

// Client returns a go-redis client of the server, closed when the test ends.
func (s *Server) Client(tb testing.TB) *goredis.Client {
	c := goredis.NewClient(s.Options())
	tb.Cleanup(func() { c.Close() })
	return c
}

// Cluster is a Redis Cluster of masters with replicas each.
type Cluster struct {
	Nodes []*Server // masters first
	tb    testing.TB
}

// StartCluster starts masters+masters*replicas cluster-enabled servers
// (with the redis-server arguments extra, such as
// "--cluster-require-full-coverage", "no"), joins them with redis-cli
// --cluster create and waits for cluster_state:ok on every node.
func StartCluster(tb testing.TB, masters, replicas int, extra ...string) *Cluster {
	tb.Helper()
	cl := &Cluster{tb: tb}
	args := []string{"--cluster", "create"}
	for i := 0; i < masters*(1+replicas); i++ {
		s := start(tb, true, extra...)
		cl.Nodes = append(cl.Nodes, s)
		args = append(args, s.Addr)
	}
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	out, err := exec.Command("redis-cli", args...).CombinedOutput()
	if err != nil {
		tb.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	cl.WaitOK()
	return cl
}

// Addrs returns every node's address.
func (cl *Cluster) Addrs() []string {
	var a []string
	for _, s := range cl.Nodes {
		a = append(a, s.Addr)
	}
	return a
}

// WaitOK waits until every running node reports cluster_state:ok and
// knows every other node, and every slot is served.
func (cl *Cluster) WaitOK() {
	cl.tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok := true
		for _, s := range cl.Nodes {
			if s.cmd == nil {
				continue
			}
			info, err := s.Do("CLUSTER", "INFO")
			if err != nil || !strings.Contains(info, "cluster_state:ok") ||
				!strings.Contains(info, "cluster_slots_ok:16384") {
				ok = false
				break
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			cl.tb.Fatalf("the cluster did not reach cluster_state:ok in 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Client returns a cluster client, closed when the test ends.
func (cl *Cluster) Client(tb testing.TB) *goredis.ClusterClient {
	c := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: cl.Addrs()})
	tb.Cleanup(func() { c.Close() })
	if err := c.ForEachShard(context.Background(), func(ctx context.Context, s *goredis.Client) error {
		return s.Ping(ctx).Err()
	}); err != nil {
		tb.Fatalf("cluster client: %v", err)
	}
	return c
}

// freePort returns a loopback port nothing listens on (and, for a cluster
// node, whose bus port, +10000, is free too).
func freePort(tb testing.TB, cluster bool) int {
	for i := 0; i < 100; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatalf("no free port: %v", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !cluster {
			return port
		}
		if port+10000 > 65535 {
			continue
		}
		if b, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+10000)); err == nil {
			b.Close()
			return port
		}
	}
	tb.Fatalf("no free port pair for a cluster node")
	return 0
}
