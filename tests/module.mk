# tests/: the harness, and the tests of the generic utilities.

OBJS += $(HARNESS_OBJ) $(BUILD)/tests/test_util.o

TESTS += $(BUILD)/tests/test_util
$(BUILD)/tests/test_util: $(BUILD)/tests/test_util.o $(HARNESS_OBJ) $(UTIL_LIB)
	$(link)

SCRIPT_TESTS += tests/test_runner.sh
