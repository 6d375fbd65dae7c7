# tests/: the harness, and the tests of the generic utilities.

OBJS += $(HARNESS_OBJ) $(BUILD)/tests/test_util.o

TESTS += $(BUILD)/tests/test_util
$(BUILD)/tests/test_util: $(BUILD)/tests/test_util.o $(HARNESS_OBJ) $(UTIL_LIB)
	$(link)

SCRIPT_TESTS += tests/test_runner.sh

# The bridge: the independent Python model against build/shiro-plan, and
# push's agreement over 20,001 steps.  SHIRO_PLAN points both at the
# runner of this build (the sanitizer build under make asan).
SCRIPT_TESTS += tests/bridge.py tests/push.py
export SHIRO_PLAN = $(BUILD)/shiro-plan
