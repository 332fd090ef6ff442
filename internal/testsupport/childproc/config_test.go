package childproc

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

const configEnv = "CHILDPROC_TEST_CONFIG"

type testConfig struct {
	Name string
	N    int
}

// What the parent hands, the child reads whole; what it cannot read ends
// it with status 2 and says so.
func TestConfigHandedToChild(t *testing.T) {
	out, err := Command("TestConfigChild", configEnv, testConfig{"a b", 7}).CombinedOutput()
	if err != nil || !strings.Contains(string(out), `child read {Name:a b N:7}`) {
		t.Fatalf("child: %v\n%s", err, out)
	}
	cmd := Command("TestConfigChild", configEnv, nil)
	cmd.Env = append(cmd.Env, configEnv+`={"N":"seven"}`)
	out, err = cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "bad config") {
		t.Fatalf("a bad config: %v\n%s", err, out)
	}
}

func TestConfigChild(t *testing.T) {
	var cfg testConfig
	if !Config(configEnv, &cfg) {
		t.Skip("a child of TestConfigHandedToChild")
	}
	fmt.Printf("child read %+v\n", cfg)
}
