// Package zmtp speaks ZMTP 3.1, ZeroMQ's wire protocol, over TCP and
// Unix-domain sockets, so that duty's agents exchange messages with
// libzmq and its bindings in any language, with no broker.
//
// docs/zmtp.md describes the framing, the greeting and the handshake.
package zmtp
