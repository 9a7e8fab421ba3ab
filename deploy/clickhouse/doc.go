// Package localclickhouse holds no code. Its folder holds the local ClickHouse server of
// `make clickhouse`, `make demo` and `make test`:
//
//   - local.sh starts, stops and describes it: the official `clickhouse` binary when installed,
//     otherwise today's engine from chDB's library served by chdb-server, and Debian's
//     clickhouse-server (18.16) when asked for (GPUCOST_CH_ENGINE=debian) or when nothing else
//     can be had;
//   - chdb-server/chdb-server.c is the launcher that serves chDB's engine over the native
//     protocol and HTTP (its comment says how, and what it repairs in the library first).
//
// The tests run the launcher on the real engine (a failed login and an unknown database leave
// the server up; SIGTERM stops it cleanly with its data kept), which needs GPUCOST_INTEGRATION=1
// and npm (local.sh fetches the engine), and on stand-in libraries built from
// testdata/fake_engine.cc (the repair works; a library of another layout is refused with a
// message that says what differs), which need gcc and g++.
package localclickhouse
