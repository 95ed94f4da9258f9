// (g), the kept-Buffer floor of bench/micro.js: the least a reader that gives the program
// a Buffer of its own can do through N-API. Each body is one memcpy per chunk into the
// next slot of a 128 MiB ring faulted in once (the cold floor's memory), then one
// napi_create_external_buffer over that slot whose finalizer does nothing: no pool, no
// rules, no accounting. Bench only, never shipped; a slot is reused 128 MiB later, which
// is fine for a benchmark that drops every body at once and wrong for anything else.
#include <node_api.h>
#include <stdlib.h>
#include <string.h>

#define RING_BYTES ((size_t)128 << 20)

static char *ring;
static size_t ring_at;
static char *slot;
static size_t slot_len;
static size_t slot_at;

static void nothing(napi_env env, void *data, void *hint) {
  (void)env;
  (void)data;
  (void)hint;
}

// begin(length): the next slot, for a body of `length` bytes.
static napi_value begin(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  double length = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
      napi_get_value_double(env, argv[0], &length) != napi_ok || length < 0 || length > (double)RING_BYTES) {
    napi_throw_range_error(env, NULL, "begin(length): 0 to 128 MiB");
    return NULL;
  }
  slot_len = (size_t)length;
  if (ring_at + slot_len > RING_BYTES) ring_at = 0;
  slot = ring + ring_at;
  ring_at += slot_len;
  slot_at = 0;
  return NULL;
}

// push(arrayBuffer): its bytes after the slot's last.
static napi_value push(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  void *data = NULL;
  size_t length = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
      napi_get_arraybuffer_info(env, argv[0], &data, &length) != napi_ok || slot_at + length > slot_len) {
    napi_throw_type_error(env, NULL, "push(arrayBuffer): an ArrayBuffer that fits the slot");
    return NULL;
  }
  memcpy(slot + slot_at, data, length);
  slot_at += length;
  return NULL;
}

// finish(): a Buffer over the slot's bytes.
static napi_value finish(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value buffer = NULL;
  if (napi_create_external_buffer(env, slot_at, slot, nothing, NULL, &buffer) != napi_ok) return NULL;
  return buffer;
}

NAPI_MODULE_INIT() {
  if (ring == NULL) {
    ring = malloc(RING_BYTES);
    if (ring == NULL) {
      napi_throw_error(env, NULL, "kept-floor: no memory for the ring");
      return NULL;
    }
    memset(ring, 1, RING_BYTES);
  }
  napi_property_descriptor fns[] = {
    {"begin", NULL, begin, NULL, NULL, NULL, napi_default, NULL},
    {"push", NULL, push, NULL, NULL, NULL, napi_default, NULL},
    {"finish", NULL, finish, NULL, NULL, NULL, napi_default, NULL},
  };
  if (napi_define_properties(env, exports, 3, fns) != napi_ok) return NULL;
  return exports;
}
