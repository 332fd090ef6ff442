package victorialogs

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// Cluster is VictoriaLogs run as a cluster, every part a process of the
// same binary: storage nodes, and in front of them a vlinsert that takes
// OTLP and a vlselect that answers queries.
type Cluster struct {
	Storage []*Server
	Insert  *Server // vlinsert
	Select  *Server // vlselect
	bin     string
	dir     string
}

// StartCluster starts n storage nodes, each with its data in dir, then a
// vlinsert and a vlselect naming them. On an error it stops what it had
// started.
func StartCluster(ctx context.Context, bin, dir string, n int) (c *Cluster, err error) {
	c = &Cluster{bin: bin, dir: dir}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	var addrs []string
	for i := range n {
		s, err := c.startStorage(ctx, i, "")
		if err != nil {
			return nil, err
		}
		c.Storage = append(c.Storage, s)
		addrs = append(addrs, s.Addr())
	}
	nodes := "-storageNode=" + strings.Join(addrs, ",")
	if c.Insert, err = Start(ctx, bin, Options{DataDir: filepath.Join(dir, "vlinsert"), Args: []string{nodes, "-select.disable"}}); err != nil {
		return nil, fmt.Errorf("vlinsert: %w", err)
	}
	if c.Select, err = Start(ctx, bin, Options{DataDir: filepath.Join(dir, "vlselect"), Args: []string{nodes, "-insert.disable"}}); err != nil {
		return nil, fmt.Errorf("vlselect: %w", err)
	}
	return c, nil
}

// startStorage starts storage node i on addr ("" picks a free port), its
// data in dir/storage-i.
func (c *Cluster) startStorage(ctx context.Context, i int, addr string) (*Server, error) {
	s, err := Start(ctx, c.bin, Options{Addr: addr, DataDir: filepath.Join(c.dir, fmt.Sprintf("storage-%d", i))})
	if err != nil {
		return nil, fmt.Errorf("storage node %d: %w", i, err)
	}
	return s, nil
}

// RestartStorage starts storage node i again, after it was stopped, on
// its address and its data.
func (c *Cluster) RestartStorage(ctx context.Context, i int) error {
	s, err := c.startStorage(ctx, i, c.Storage[i].Addr())
	if err != nil {
		return err
	}
	c.Storage[i] = s
	return nil
}

// Count is `query | count()` through vlselect, after every storage node
// has made what it took searchable.
func (c *Cluster) Count(ctx context.Context, query string) (int, error) {
	for _, s := range c.Storage {
		if err := s.Flush(ctx); err != nil {
			return 0, err
		}
	}
	return c.Select.Count(ctx, query)
}

// Stop stops vlselect, vlinsert, then the storage nodes.
func (c *Cluster) Stop() {
	for _, s := range append([]*Server{c.Select, c.Insert}, c.Storage...) {
		if s != nil {
			s.Stop()
		}
	}
}
