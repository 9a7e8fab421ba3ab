// A stand-in for libchdb.so with the part of its layout that chdb-server repairs: the classes
// Poco::ErrorHandler and KillingErrorHandler, and query_stable_v2, which raises the three kinds
// of error through the handler the way a connection thread does. The launcher's tests build it
// with g++ in variants whose layout chdb-server must refuse:
//   -DNO_HANDLER     no KillingErrorHandler at all
//   -DSEVENTH_SLOT   Poco::ErrorHandler with one more virtual function than the engine's
//   -DOTHER_BASE     KillingErrorHandler derived from another class
// Built as is, the layout matches the engine's: unrepaired, query_stable_v2 aborts in
// std::terminate; repaired, the base class's handlers print the errors and it returns.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <stdexcept>

namespace Poco {
class Exception {};

class ErrorHandler {
public:
	virtual ~ErrorHandler();
	virtual void exception(const Exception &);
	virtual void exception(const std::exception &);
	virtual void exception();
	virtual void unused();
#ifdef SEVENTH_SLOT
	virtual void another();
#endif
};

ErrorHandler::~ErrorHandler() {}
void ErrorHandler::exception(const Exception &) { std::fputs("logged: Poco::Exception\n", stderr); }
void ErrorHandler::exception(const std::exception &e) { std::fprintf(stderr, "logged: %s\n", e.what()); }
void ErrorHandler::exception() { std::fputs("logged: unknown exception\n", stderr); }
void ErrorHandler::unused() {}
#ifdef SEVENTH_SLOT
void ErrorHandler::another() {}
#endif
} // namespace Poco

#ifdef OTHER_BASE
class Other {
public:
	virtual ~Other();
	virtual void exception(const Poco::Exception &);
	virtual void exception(const std::exception &);
	virtual void exception();
	virtual void unused();
};
Other::~Other() {}
void Other::exception(const Poco::Exception &) {}
void Other::exception(const std::exception &) {}
void Other::exception() {}
void Other::unused() {}
using Base = Other;
#else
using Base = Poco::ErrorHandler;
#endif

#ifndef NO_HANDLER
class KillingErrorHandler : public Base {
public:
	void exception(const Poco::Exception &) override { std::terminate(); }
	void exception(const std::exception &) override { std::terminate(); }
	void exception() override { std::terminate(); }
};
static KillingErrorHandler handler;
// Reached through a volatile pointer, so the compiler cannot know its type and must call through
// the vtable, as the engine's connection threads do.
static Base *volatile current = &handler;
#endif

struct local_result_v2 {
	char *buf;
	size_t len;
	void *vec;
	double elapsed;
	uint64_t rows_read, bytes_read;
	char *error_message;
};

extern "C" local_result_v2 *query_stable_v2(int, char **) {
#ifndef NO_HANDLER
	current->exception(Poco::Exception());
	current->exception(std::runtime_error("std::exception"));
	current->exception();
#endif
	static local_result_v2 result;
	return &result;
}
