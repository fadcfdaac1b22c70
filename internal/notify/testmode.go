package notify

// Test mode (issue 36, item 1): a test-mode API key's key id starts with
// TestKeyPrefix (live keys start "nk_" plus hex), so the key says what
// it is wherever it is pasted.
const TestKeyPrefix = "nk_test_"
