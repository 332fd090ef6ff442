package otlplog

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/zaplens/zaplens/internal/confval"
	"github.com/zaplens/zaplens/internal/declarative"
)

// The declarative configuration: a file named by OTEL_CONFIG_FILE, read
// with otelconf's parser, so that zaplens reads the very file the
// program's other providers are built from (otelconf.NewSDK), variable
// substitution included. Its reader is registered by importing
// otlplog/configfile (configFileImport), which parses the file and checks
// what it says of the logs into declarative.Settings: otelconf links the
// SDK's trace and metric exporters, and the reading of the file is code
// too, which a program that does not read the file should not pay for.
// Here the settings are only given to what no option set (applyFile).

// configFileVar names the configuration file.
const configFileVar = "OTEL_CONFIG_FILE"

// configFileImport is the package that registers the file's reader.
const configFileImport = "github.com/zaplens/zaplens/otlplog/configfile"

// configFileSet tells whether OTEL_CONFIG_FILE names a file.
func configFileSet() bool { return strings.TrimSpace(os.Getenv(configFileVar)) != "" }

// applyConfigFile reads the file OTEL_CONFIG_FILE names, if any, into the
// settings no option set: the file replaces the variables (variable.file),
// and options win over the file. Its errors name the file and the setting.
// It returns what the file says, for whether it turns the logs off and
// its resource.
func (c *providerConfig) applyConfigFile(ctx context.Context) (*declarative.Settings, error) {
	path := strings.TrimSpace(os.Getenv(configFileVar))
	if path == "" {
		return nil, nil
	}
	load := declarative.Registered()
	if load == nil {
		// The user asked for the file's configuration: the variables it
		// replaces are not a fallback.
		return nil, fmt.Errorf("%s=%s: no parser of the file is linked in: import _ %q", configFileVar, path, configFileImport)
	}
	if set := replacedVariables(); len(set) > 0 {
		c.warnings = append(c.warnings, fmt.Sprintf("%s replaces %s: not read (the file may read a variable as ${NAME})",
			configFileVar, strings.Join(set, ", ")))
	}
	b, err := confval.ReadFile(path) // a regular file, bounded, as a certificate is
	if err != nil {
		return nil, fmt.Errorf("%s: %w", configFileVar, err)
	}
	f, err := load(ctx, b)
	if err == nil {
		err = c.applyFile(f)
	}
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %w", configFileVar, path, err)
	}
	return f, nil
}

// applyFile gives each setting no option set the file's value. An option
// leaves the file's value unread, its error too: an option that chose the
// exporter, all of the exporter's. The errors are told in the file's
// order, the first only but for the batch's two durations.
func (c *providerConfig) applyFile(f *declarative.Settings) error {
	if f.Disabled {
		return nil
	}
	if err := errors.Join(fromFile(&c.queueSize, f.QueueSize), fromFile(&c.batchSize, f.BatchSize),
		fromFile(&c.scheduleDelay, f.ScheduleDelay), fromFile(&c.exportTimeout, f.ExportTimeout)); err != nil {
		return err
	}
	e := &f.Exporter
	if e.Refused != nil {
		return e.Refused
	}
	if !c.exporterName.set {
		for _, err := range []error{fromFile(&c.exporterName, e.Name), fromFile(&c.protocol, e.Protocol),
			fromFile(&c.endpoint, e.Endpoint), fromFile(&c.compression, e.Compression), fromFile(&c.otlpTimeout, e.Timeout),
			fromFile(&c.headers, e.Headers)} {
			if err != nil {
				return err
			}
		}
		if err := c.fileTLS(e.TLS); err != nil {
			return err
		}
	}
	return errors.Join(fromFile(&c.attrCount, f.AttributeCount), fromFile(&c.attrValueLen, f.AttributeValueLength), f.ResourceErr)
}

// fileTLS loads the file's tls section into the TLS configuration, if no
// option gave one: the files of one an option replaced are not read, as
// the certificate variables are not (readTLS). Unlike a variable's, the
// first file that cannot be used refuses the file.
func (c *providerConfig) fileTLS(v declarative.Value[confval.TLSFiles]) error {
	if v.At == "" || c.tlsConfig.set {
		return nil
	}
	cfg, errs := v.V.Config()
	if len(errs) > 0 {
		return errs[0]
	}
	return fromFile(&c.tlsConfig, declarative.Value[*tls.Config]{At: v.At, V: cfg})
}

// fromFile gives s the file's value v, if the file gives one and no
// option set s, or returns the error that refuses v. The resolver checks
// the value as an option's and names it by from: the file is named there
// too, as it is in the file's own errors.
func fromFile[T any](s *setting[T], v declarative.Value[T]) error {
	switch {
	case v.At == "" || s.set:
		return nil
	case v.Err != nil:
		return v.Err
	}
	s.by(configFileVar+"'s "+v.At, v.V)
	return nil
}
