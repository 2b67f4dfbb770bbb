// redigo_main: redigo (Debian's golang-github-gomodule-redigo-dev)
// against leasegate (../multi_clients.sh): MULTI/EXEC by Send and Do,
// WATCH broken by a write from another connection (LG_PORT_B: the same
// gateway, or another replica on the same table), EXECABORT, and a Script
// loaded through A and run through B. Prints `ok <what>` / `not ok <what>`
// per check; exits 1 when one failed. Built offline in GOPATH mode:
//
//	GOPATH=/usr/share/gocode GO111MODULE=off go build -o redigo_test redigo_main.go
package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
)

var failed bool
var setup = os.Getenv("LG_SETUP")

func check(ok bool, what string, detail interface{}) {
	if ok {
		fmt.Printf("ok %s: %s\n", setup, what)
		return
	}
	fmt.Printf("not ok %s: %s (%v)\n", setup, what, detail)
	failed = true
}

func dial(port string) redis.Conn {
	c, err := redis.Dial("tcp", "127.0.0.1:"+port, redis.DialConnectTimeout(5*time.Second),
		redis.DialReadTimeout(20*time.Second))
	if err != nil {
		fmt.Printf("not ok %s: dial %s: %v\n", setup, port, err)
		os.Exit(1)
	}
	return c
}

func main() {
	a, b := dial(os.Getenv("LG_PORT_A")), dial(os.Getenv("LG_PORT_B"))
	defer a.Close()
	defer b.Close()
	run := fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano()%100000)
	k, w := "go-"+run, "go-w-"+run

	a.Send("MULTI")
	a.Send("SET", k, "me", "NX", "PX", 20000)
	a.Send("GET", k)
	r, err := redis.Values(a.Do("EXEC"))
	check(err == nil && len(r) == 2 && r[0] == "OK" && string(r[1].([]byte)) == "me",
		"MULTI/SET/GET/EXEC by Send and Do", fmt.Sprint(r, err))

	_, err = a.Do("WATCH", w)
	check(err == nil, "WATCH", err)
	_, err = b.Do("SET", w, "b", "NX", "PX", 20000)
	check(err == nil, "B writes the watched key", err)
	a.Send("MULTI")
	a.Send("SET", w, "a", "PX", 20000)
	rep, err := a.Do("EXEC")
	check(err == nil && rep == nil, "EXEC after the watched key changed: nil", fmt.Sprint(rep, err))
	v, _ := redis.String(a.Do("GET", w))
	check(v == "b", "the queued SET did not run", v)

	a.Send("MULTI")
	a.Send("SET", k+"-x", "v", "PX", 5000)
	a.Send("ZADD", k, 1, "m")
	_, err = a.Do("EXEC")
	// Do answers the first error of the pending replies: ZADD's, refused
	// when queued (then EXEC's EXECABORT)
	check(err != nil && (strings.Contains(err.Error(), "ZADD") ||
		strings.HasPrefix(err.Error(), "EXECABORT")), "ZADD in MULTI: the transaction aborts", err)
	x, err := a.Do("GET", k+"-x")
	check(err == nil && x == nil, "nothing of the aborted transaction ran", fmt.Sprint(x, err))

	s := redis.NewScript(1, "return 'go ' .. redis.call('get', KEYS[1])")
	check(s.Load(a) == nil, "Script.Load through A", nil)
	got, err := redis.String(s.Do(b, k))
	check(err == nil && got == "go me", "the Script through B (EVALSHA of the table's copy)",
		fmt.Sprint(got, err))
	if failed {
		os.Exit(1)
	}
}
