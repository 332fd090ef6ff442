// Package spool keeps each record a process logs in a memory-mapped file until the collector has it,
// so that a process killed with records unsent leaves them for the next one, which finds and ships them.
package spool
