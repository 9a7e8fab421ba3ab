// chdb-server: a current ClickHouse server made from chDB's engine library, for development, the
// tests and the demo on machines without an official `clickhouse` binary.
//
//   chdb-server LIBCHDB [clickhouse-local options ...]
//   chdb-server /path/to/libchdb.so --config-file=config.xml
//
// libchdb.so (npm package @chdb/lib-linux-x64-gnu) is ClickHouse's clickhouse-local in a library.
// clickhouse-local can serve the native protocol and HTTP itself (`SYSTEM START LISTEN TCP`,
// `SYSTEM START LISTEN HTTP`), honouring --config-file (path, ports, listen_host, users_config,
// profiles) or --listen_host/--tcp_port/--http_port/--path. This program runs, through the
// library's one-shot entry point query_stable_v2(argc, argv), a query that starts both listeners
// and then reads its standard input until that closes. So the server runs exactly as long as its
// input stays open.
//
// The process is two: a supervisor, which holds the write end of the engine's standard input, and
// the engine in a child process. SIGTERM, SIGINT or SIGHUP to the supervisor closes that input:
// the query ends, the engine shuts down cleanly (tables closed, data kept) and the supervisor
// exits with the engine's status. The engine itself ignores those signals, so one sent to the
// whole process group (a Ctrl-C) stops it the same way. If the supervisor dies, the input closes
// too, so the engine never outlives it. A second signal kills the engine at once.
//
// One repair is made to the engine before it serves. Local mode installs a Poco error handler,
// KillingErrorHandler, that calls std::terminate for any exception escaping a connection thread,
// which is right for a one-shot command and wrong for a server: a client's failed login or a
// connection to a database that does not exist would abort the whole server. The library has no
// symbols for it, so the program finds the class through its RTTI (the type names
// "19KillingErrorHandler" and its base "N4Poco12ErrorHandlerE"), checks the layout it expects
// (exactly one type info and one vtable for each, the base link, six virtual slots in both,
// slots 2 to 4 overridden and slot 5 inherited), and points the three overridden slots, the
// exception() overloads, at the base class's, which log the error and carry on. When anything does not match, as it may
// with a future engine, it refuses to start and says what it found: it never patches blind.
//
// Exit status: the engine's (0 after a clean stop), 1 when the engine cannot start or the
// library does not match, 2 for bad usage, 128+N when the engine dies of signal N.

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

// The query the engine serves: start both listeners, then block reading standard input.
static const char serve_query[] =
    "SYSTEM START LISTEN TCP; SYSTEM START LISTEN HTTP; "
    "SELECT count() FROM file('/dev/stdin', 'LineAsString') FORMAT Null";

static const char handler_type[] = "19KillingErrorHandler";
static const char handler_base_type[] = "N4Poco12ErrorHandlerE";

// Both classes have six virtual slots: the complete and deleting destructors, then
// exception(const Poco::Exception&), exception(const std::exception&) and exception(), which
// KillingErrorHandler overrides, then one more that it inherits (an empty function in 26.7).
enum { vtable_slots = 6, first_exception_slot = 2, last_exception_slot = 4 };

// The result of query_stable_v2, as chdb.h declares it.
struct local_result_v2 {
	char *buf;
	size_t len;
	void *vec;
	double elapsed;
	uint64_t rows_read;
	uint64_t bytes_read;
	char *error_message;
};

static void fail(int status, const char *format, ...) {
	va_list args;
	va_start(args, format);
	fputs("chdb-server: ", stderr);
	vfprintf(stderr, format, args);
	fputc('\n', stderr);
	va_end(args);
	exit(status);
}

// The library's loaded segments: read-only data, code, and the data that is read-only after
// relocation (RELRO), where type infos and vtables live.
struct segment {
	uintptr_t start, end;
};
struct library {
	const char *path;
	struct segment rodata[4], code[4], relro;
	int nrodata, ncode;
	uintptr_t base;
};

static int find_segments(struct dl_phdr_info *info, size_t size, void *data) {
	(void)size;
	struct library *lib = data;
	if (info->dlpi_addr != lib->base) return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		struct segment s = {lib->base + ph->p_vaddr, lib->base + ph->p_vaddr + ph->p_memsz};
		if (ph->p_type == PT_GNU_RELRO) {
			lib->relro = s;
		} else if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			if (lib->ncode < 4) lib->code[lib->ncode++] = s;
		} else if (ph->p_type == PT_LOAD && !(ph->p_flags & PF_W)) {
			if (lib->nrodata < 4) lib->rodata[lib->nrodata++] = s;
		}
	}
	return 1;
}

static int inside(const struct segment *s, int n, uintptr_t addr, size_t size) {
	for (int i = 0; i < n; i++)
		if (addr >= s[i].start && addr + size <= s[i].end) return 1;
	return 0;
}

static int in_code(const struct library *lib, uintptr_t addr) { return inside(lib->code, lib->ncode, addr, 1); }
static int in_relro(const struct library *lib, uintptr_t addr, size_t size) { return inside(&lib->relro, 1, addr, size); }

// find_string returns the address of the one NUL-terminated copy of s in the library's read-only
// data, 0 when there is none; more than one copy is a mismatch.
static uintptr_t find_string(const struct library *lib, const char *s) {
	uintptr_t found = 0;
	int count = 0;
	size_t n = strlen(s) + 1;
	for (int i = 0; i < lib->nrodata; i++) {
		const char *p = (const char *)lib->rodata[i].start, *end = (const char *)lib->rodata[i].end;
		while (p < end && (p = memmem(p, end - p, s, n)) != NULL) {
			// A type name is a string of its own, not the tail of a longer one.
			if (p == (const char *)lib->rodata[i].start || p[-1] == '\0') {
				found = (uintptr_t)p;
				count++;
			}
			p += n;
		}
	}
	if (count > 1) fail(1, "%s: %d copies of the type name \"%s\", expected one: not the engine layout this launcher knows", lib->path, count, s);
	return found;
}

// find_words returns how many aligned words of RELRO equal value and whose previous word equals
// before (any previous word when before is -1); the first is stored in *at.
static int find_words(const struct library *lib, uintptr_t value, intptr_t before, const uintptr_t **at) {
	int count = 0;
	const uintptr_t *w = (const uintptr_t *)((lib->relro.start + sizeof(uintptr_t) - 1) & ~(sizeof(uintptr_t) - 1));
	const uintptr_t *end = (const uintptr_t *)(lib->relro.end & ~(sizeof(uintptr_t) - 1));
	for (w++; w < end; w++) {
		if (*w == value && (before == -1 || w[-1] == (uintptr_t)before)) {
			if (count++ == 0) *at = w;
		}
	}
	return count;
}

// type_info returns the one type info in RELRO whose name field points at name.
static const uintptr_t *type_info(const struct library *lib, uintptr_t name, const char *what) {
	const uintptr_t *field = NULL;
	int n = find_words(lib, name, -1, &field);
	if (n != 1) fail(1, "%s: %d type infos name %s, expected one: not the engine layout this launcher knows", lib->path, n, what);
	return field - 1; // {vtable of the type info class, name, base type info (single inheritance)}
}

// vtable returns the slots of the one vtable in RELRO that starts {offset to top 0, &ti}.
static uintptr_t *vtable(const struct library *lib, const uintptr_t *ti, const char *what) {
	const uintptr_t *typeinfo_field = NULL;
	int n = find_words(lib, (uintptr_t)ti, 0, &typeinfo_field);
	if (n != 1) fail(1, "%s: %d vtables of %s, expected one: not the engine layout this launcher knows", lib->path, n, what);
	uintptr_t *slots = (uintptr_t *)(typeinfo_field + 1);
	int count = 0;
	while (in_relro(lib, (uintptr_t)&slots[count], sizeof(uintptr_t)) && in_code(lib, slots[count])) count++;
	if (count != vtable_slots)
		fail(1, "%s: the vtable of %s has %d virtual functions, expected %d: not the engine layout this launcher knows", lib->path, what, count, vtable_slots);
	return slots;
}

// disarm_killing_error_handler makes KillingErrorHandler's exception() overloads those of its
// base, Poco::ErrorHandler, which log instead of calling std::terminate.
static void disarm_killing_error_handler(struct library *lib) {
	uintptr_t name = find_string(lib, handler_type);
	if (!name) fail(1, "%s: no type named %s (local mode's error handler): not the engine layout this launcher knows", lib->path, handler_type);
	uintptr_t base_name = find_string(lib, handler_base_type);
	if (!base_name) fail(1, "%s: no type named %s: not the engine layout this launcher knows", lib->path, handler_base_type);

	const uintptr_t *ti = type_info(lib, name, handler_type);
	const uintptr_t *base_ti = type_info(lib, base_name, handler_base_type);
	if (!in_relro(lib, (uintptr_t)&ti[2], sizeof(uintptr_t)) || ti[2] != (uintptr_t)base_ti)
		fail(1, "%s: %s does not derive from %s alone: not the engine layout this launcher knows", lib->path, handler_type, handler_base_type);

	uintptr_t *slots = vtable(lib, ti, handler_type);
	const uintptr_t *base_slots = vtable(lib, base_ti, handler_base_type);
	for (int i = first_exception_slot; i <= last_exception_slot; i++)
		if (slots[i] == base_slots[i])
			fail(1, "%s: %s does not override slot %d, an exception() overload: not the engine layout this launcher knows", lib->path, handler_type, i);
	for (int i = last_exception_slot + 1; i < vtable_slots; i++)
		if (slots[i] != base_slots[i])
			fail(1, "%s: %s overrides slot %d, which it should inherit: not the engine layout this launcher knows", lib->path, handler_type, i);

	// The dynamic loader made the whole pages of RELRO read-only (a last partial page stays
	// writable): open the slots' pages for the write, then close again those it had closed.
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t from = (uintptr_t)&slots[first_exception_slot] & ~(page - 1);
	uintptr_t to = ((uintptr_t)&slots[last_exception_slot + 1] + page - 1) & ~(page - 1);
	uintptr_t read_only_end = lib->relro.end & ~(page - 1);
	if (mprotect((void *)from, to - from, PROT_READ | PROT_WRITE) != 0) fail(1, "making the vtable of %s writable: %s", handler_type, strerror(errno));
	for (int i = first_exception_slot; i <= last_exception_slot; i++) slots[i] = base_slots[i];
	if (read_only_end > from && mprotect((void *)from, (read_only_end < to ? read_only_end : to) - from, PROT_READ) != 0)
		fail(1, "making the vtable of %s read-only again: %s", handler_type, strerror(errno));
}

// engine loads the library, repairs it and serves until standard input closes. It does not return.
static void engine(const char *path, int argc, char **argv) {
	void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!handle) fail(1, "loading the engine: %s", dlerror());
	struct link_map *map = NULL;
	if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0) fail(1, "%s: %s", path, dlerror());
	struct library lib = {.path = path, .base = map->l_addr};
	dl_iterate_phdr(find_segments, &lib);
	if (lib.nrodata == 0 || lib.ncode == 0 || lib.relro.end == 0)
		fail(1, "%s: no read-only data, code or RELRO segment: not the engine layout this launcher knows", path);

	struct local_result_v2 *(*query)(int, char **);
	*(void **)&query = dlsym(handle, "query_stable_v2"); // POSIX's way to take a function from dlsym
	if (!query) fail(1, "%s has no query_stable_v2: not a chDB engine library", path);
	disarm_killing_error_handler(&lib);

	// clickhouse-local's command line: the program name, the caller's options, the query, NULL.
	char **args = calloc(argc + 5, sizeof(char *));
	if (!args) fail(1, "out of memory");
	int n = 0;
	args[n++] = "clickhouse";
	for (int i = 0; i < argc; i++) args[n++] = argv[i];
	args[n++] = "--multiquery";
	args[n++] = "--query";
	args[n++] = (char *)serve_query;
	struct local_result_v2 *result = query(n, args);
	if (!result) fail(1, "the engine returned no result");
	if (result->error_message) fail(1, "%s", result->error_message);
	exit(0);
}

int main(int argc, char **argv) {
	if (argc < 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: chdb-server LIBCHDB [clickhouse-local options ...]\n"
		                "  e.g. chdb-server libchdb.so --config-file=config.xml\n");
		return 2;
	}
	// Standard input, output and error must be open, so that the pipe below is none of them.
	for (int fd = 0; fd <= STDERR_FILENO; fd++)
		if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) != fd) return 1;
	int input[2];
	if (pipe(input) != 0) fail(1, "pipe: %s", strerror(errno));

	// The engine's exit arrives as SIGCHLD, even if whoever started this one ignored it.
	signal(SIGCHLD, SIG_DFL);
	sigset_t signals, previous;
	sigemptyset(&signals);
	sigaddset(&signals, SIGTERM);
	sigaddset(&signals, SIGINT);
	sigaddset(&signals, SIGHUP);
	sigaddset(&signals, SIGCHLD);
	sigprocmask(SIG_BLOCK, &signals, &previous);

	pid_t child = fork();
	if (child < 0) fail(1, "fork: %s", strerror(errno));
	if (child == 0) {
		// The engine stops the one clean way, when its input closes: a signal to the whole process
		// group (a Ctrl-C) reaches the supervisor too, which closes it.
		signal(SIGTERM, SIG_IGN);
		signal(SIGINT, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		sigprocmask(SIG_SETMASK, &previous, NULL);
		dup2(input[0], STDIN_FILENO);
		close(input[0]);
		close(input[1]);
		engine(argv[1], argc - 2, argv + 2);
	}
	close(input[0]);

	int stopping = 0;
	for (;;) {
		int sig;
		if (sigwait(&signals, &sig) != 0) continue;
		if (sig != SIGCHLD) {
			if (stopping++) kill(child, SIGKILL);
			else close(input[1]);
			continue;
		}
		int status;
		pid_t done = waitpid(child, &status, WNOHANG);
		if (done < 0) fail(1, "waiting for the engine: %s", strerror(errno));
		if (done != child) continue;
		if (WIFEXITED(status)) return WEXITSTATUS(status);
		fprintf(stderr, "chdb-server: the engine died of signal %d (%s)\n", WTERMSIG(status), strsignal(WTERMSIG(status)));
		return 128 + WTERMSIG(status);
	}
}
