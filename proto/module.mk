# proto/: the messages between processes and the small utilities every
# binary links.

PROTO_UTIL_SRCS := proto/log.c proto/xmalloc.c proto/buf.c proto/err.c
PROTO_UTIL_OBJS := $(PROTO_UTIL_SRCS:%.c=$(BUILD)/%.o)
OBJS += $(PROTO_UTIL_OBJS)

# libshiroutil: the generic utilities, linked by every program.
$(UTIL_LIB): $(PROTO_UTIL_OBJS)
