// Command zap is zap alone, writing JSON to stdout: the floor of the
// binary-size table (see ../binsize.sh).
package main

import (
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

func main() {
	enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	logger := zap.New(zapcore.NewCore(enc, os.Stdout, zap.InfoLevel))
	logger.Info("hello")
}
