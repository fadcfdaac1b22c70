// Package compose turns what a send names into the message a vendor gets:
// it resolves the template version a send uses (code, channel, locale,
// review status), lays the sent title, text and HTML over it, and renders
// {{name}} placeholders and the version's layout within the size bounds of
// each part. Sends, OTP, test-sends, fallback steps, the template preview
// and campaign fan-out all compose through it, so a message is built the
// same way on every path. It holds no use case.
package compose
