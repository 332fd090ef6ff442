package childproc

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
)

// Command is this test binary run again for its test named test, as a
// child handed cfg, as JSON, in the variable env; the child reads it with
// [Config]. The caller adds to it (arguments, environment, stderr) and
// starts it.
func Command(test, env string, cfg any) *exec.Cmd {
	b, err := json.Marshal(cfg)
	if err != nil {
		panic(fmt.Sprintf("childproc: a %T cannot be handed to a child: %v", cfg, err)) // the test's own type
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), env+"="+string(b))
	return cmd
}

// Config reads into cfg, in the child, what [Command] handed it in the
// variable env, and reports whether it was handed anything: a test run
// without env is no child, and skips. A configuration it cannot read ends
// the process with status 2, and why on stdout, which the parent reads.
func Config(env string, cfg any) bool {
	raw := os.Getenv(env)
	if raw == "" {
		return false
	}
	if err := json.Unmarshal([]byte(raw), cfg); err != nil {
		fmt.Printf("bad config %q: %v\n", raw, err)
		os.Exit(2)
	}
	return true
}
