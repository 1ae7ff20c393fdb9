#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <microhttpd.h>

// Swift does not import C variadic functions; these non-variadic wrappers are what
// HTTPServer calls instead. Options go in one MHD_OPTION_ARRAY so Swift can build
// the list conditionally (TLS only when configured, and so on).

/// MHD_start_daemon with all options passed as one MHD_OptionItem array (ending in MHD_OPTION_END).
/// `accept_policy` (may be NULL) sees each accepted socket's address first; MHD_NO closes it at once.
static inline struct MHD_Daemon *
reclaim_mhd_start_daemon (unsigned int flags,
                          MHD_AcceptPolicyCallback accept_policy, void *accept_policy_cls,
                          MHD_AccessHandlerCallback handler, void *handler_cls,
                          struct MHD_OptionItem *options)
{
  return MHD_start_daemon (flags, 0, accept_policy, accept_policy_cls, handler, handler_cls,
                           MHD_OPTION_ARRAY, options,
                           MHD_OPTION_END);
}

// Options taking a function pointer carry it in the intptr_t `value` member; the
// casts are done here, in C, so Swift never bit-casts function pointers.

/// An MHD_OPTION_NOTIFY_COMPLETED item.
static inline struct MHD_OptionItem
reclaim_mhd_option_notify_completed (MHD_RequestCompletedCallback callback, void *cls)
{
  struct MHD_OptionItem item = { MHD_OPTION_NOTIFY_COMPLETED, (intptr_t) callback, cls };
  return item;
}

typedef void *(*reclaim_mhd_uri_log_callback) (void *cls, const char *uri, struct MHD_Connection *connection);

/// An MHD_OPTION_URI_LOG_CALLBACK item: the callback sees the raw request target and its result becomes the first *con_cls.
static inline struct MHD_OptionItem
reclaim_mhd_option_uri_log (reclaim_mhd_uri_log_callback callback, void *cls)
{
  struct MHD_OptionItem item = { MHD_OPTION_URI_LOG_CALLBACK, (intptr_t) callback, cls };
  return item;
}

typedef void (*reclaim_mhd_message_sink) (void *cls, const char *message);

/// Formats MHD's printf-style diagnostics so Swift receives a plain string.
static inline void
reclaim_mhd_log_trampoline (void *cls, const char *format, va_list args)
{
  void **target = (void **) cls;   // target[0]: the sink, target[1]: its context
  char message[512];
  vsnprintf (message, sizeof message, format, args);
  ((reclaim_mhd_message_sink) target[0]) (target[1], message);
}

/// An MHD_OPTION_EXTERNAL_LOGGER item; `target` points to two pointers { sink, context } that outlive the daemon.
static inline struct MHD_OptionItem
reclaim_mhd_option_logger (void **target)
{
  struct MHD_OptionItem item = { MHD_OPTION_EXTERNAL_LOGGER, (intptr_t) &reclaim_mhd_log_trampoline, target };
  return item;
}

/// Stores the sink function pointer into a target pair (Swift cannot store a C function pointer in void * itself).
static inline void
reclaim_mhd_set_log_target (void **target, reclaim_mhd_message_sink sink, void *context)
{
  target[0] = (void *) sink;
  target[1] = context;
}

/// The port the daemon listens on (MHD_DAEMON_INFO_BIND_PORT), 0 if unknown.
static inline uint16_t
reclaim_mhd_bound_port (struct MHD_Daemon *daemon)
{
  const union MHD_DaemonInfo *info = MHD_get_daemon_info (daemon, MHD_DAEMON_INFO_BIND_PORT);
  return info == NULL ? 0 : info->port;
}

/// The peer's socket address (MHD_CONNECTION_INFO_CLIENT_ADDRESS), or NULL.
static inline const struct sockaddr *
reclaim_mhd_client_address (struct MHD_Connection *connection)
{
  const union MHD_ConnectionInfo *info = MHD_get_connection_info (connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  return info == NULL ? NULL : info->client_addr;
}

/// The connection's socket (MHD_CONNECTION_INFO_CONNECTION_FD), or -1.
static inline int
reclaim_mhd_connection_fd (struct MHD_Connection *connection)
{
  const union MHD_ConnectionInfo *info = MHD_get_connection_info (connection, MHD_CONNECTION_INFO_CONNECTION_FD);
  return info == NULL ? -1 : info->connect_fd;
}

/// The connection's socket context (MHD_CONNECTION_INFO_SOCKET_CONTEXT): what the connection callback stored, or NULL.
/// Only the thread that owns the connection may ask (MHD writes the answer into the connection).
static inline void *
reclaim_mhd_socket_context (struct MHD_Connection *connection)
{
  const union MHD_ConnectionInfo *info = MHD_get_connection_info (connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return info == NULL ? NULL : info->socket_context;
}

/// A connection opened (toe = MHD_CONNECTION_NOTIFY_STARTED, 0) or closed (MHD_CONNECTION_NOTIFY_CLOSED, 1); called on the worker thread that owns it,
/// and for a close before MHD closes the socket.
typedef void (*reclaim_mhd_connection_callback) (void *cls, struct MHD_Connection *connection, void **socket_context, unsigned int toe);

/// An MHD_OPTION_NOTIFY_CONNECTION item (toe: 0 started, 1 closed).
static inline struct MHD_OptionItem
reclaim_mhd_option_notify_connection (reclaim_mhd_connection_callback callback, void *cls)
{
  struct MHD_OptionItem item = { MHD_OPTION_NOTIFY_CONNECTION, (intptr_t) callback, cls };
  return item;
}

/// How many bytes the request's head took in MHD's buffer, from the method to the end of the empty line
/// (MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE); -1 until the whole head has arrived.
static inline long
reclaim_mhd_request_header_size (struct MHD_Connection *connection)
{
  const union MHD_ConnectionInfo *info = MHD_get_connection_info (connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
  return info == NULL ? -1 : (long) info->header_size;
}

/// The status of the response queued on the connection (MHD_CONNECTION_INFO_HTTP_STATUS), 0 when none is.
static inline unsigned int
reclaim_mhd_queued_status (struct MHD_Connection *connection)
{
  const union MHD_ConnectionInfo *info = MHD_get_connection_info (connection, MHD_CONNECTION_INFO_HTTP_STATUS);
  return info == NULL ? 0 : info->http_status;
}

// A streamed body: MHD's content-reader results are macros with casts, which Swift does not import.

/// MHD_CONTENT_READER_END_OF_STREAM: the body is complete.
static const ssize_t reclaim_mhd_end_of_stream = MHD_CONTENT_READER_END_OF_STREAM;
/// MHD_CONTENT_READER_END_WITH_ERROR: the body failed; MHD closes the connection without ending the chunked body.
static const ssize_t reclaim_mhd_end_with_error = MHD_CONTENT_READER_END_WITH_ERROR;

/// A response of unknown size (sent chunked) whose bytes `reader` gives, `block_size` at most per call; `release` is
/// called once when MHD is done with it.
static inline struct MHD_Response *
reclaim_mhd_create_streamed_response (size_t block_size, MHD_ContentReaderCallback reader, void *cls,
                                      MHD_ContentReaderFreeCallback release)
{
  return MHD_create_response_from_callback (MHD_SIZE_UNKNOWN, block_size, reader, cls, release);
}
