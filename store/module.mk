# store/: the message log, LMDB (nodes, merge records, indexes, notes,
# todos, meta), the saved view and message images.  Only shirod, tests and
# offline tools link it.

STORE_SRCS := store/store.c store/store_util.c store/store_db.c \
	store/store_log.c store/store_tree.c store/store_kv.c store/store_text.c
STORE_OBJS := $(STORE_SRCS:%.c=$(BUILD)/%.o)
OBJS += $(STORE_OBJS) $(BUILD)/proto/utf8.o
$(STORE_LIB): $(STORE_OBJS)
$(UTIL_LIB): $(BUILD)/proto/utf8.o

# Programs that link the store add these.
STORE_LDLIBS := $(LIBS_LMDB) $(LIBS_JSON)

OBJS += $(BUILD)/tests/test_store.o
TESTS += $(BUILD)/tests/test_store
$(BUILD)/tests/test_store: $(BUILD)/tests/test_store.o $(HARNESS_OBJ) \
		$(STORE_LIB) $(UTIL_LIB)
	$(link)
$(BUILD)/tests/test_store: LDLIBS += $(STORE_LDLIBS)

# test_store_notes: each project's notes and task list (store_kv.c).
OBJS += $(BUILD)/tests/test_store_notes.o
TESTS += $(BUILD)/tests/test_store_notes
$(BUILD)/tests/test_store_notes: $(BUILD)/tests/test_store_notes.o \
		$(HARNESS_OBJ) $(STORE_LIB) $(UTIL_LIB)
	$(link)
$(BUILD)/tests/test_store_notes: LDLIBS += $(STORE_LDLIBS)
