package ululeredis_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// redisAddr is the address of the redis-server TestMain starts on loopback
// for the whole package: the tests give each of theirs a prefix of its own.
var redisAddr string

func TestMain(m *testing.M) {
	stop, err := startRedis()
	if err != nil {
		fmt.Fprintln(os.Stderr, "redis-server (apt-get install -y redis-server):", err)
		os.Exit(1)
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

func startRedis() (func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait() }
	redisAddr = "127.0.0.1:" + strconv.Itoa(port)
	c := goredis.NewClient(&goredis.Options{Addr: redisAddr})
	defer c.Close()
	for range 100 {
		if c.Ping(context.Background()).Err() == nil {
			return stop, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	return nil, fmt.Errorf("no answer on %s", redisAddr)
}

func client(t testing.TB) *goredis.Client {
	c := goredis.NewClient(&goredis.Options{Addr: redisAddr})
	t.Cleanup(func() { c.Close() })
	return c
}
