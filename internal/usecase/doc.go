// Package usecase is the ground every use-case room stands on: the actor
// a dashboard call acts as, the Kit of ports each room holds (store,
// clock, logger) with the audit and event writers, ids, the text rules
// every input path shares, and cursor paging. It holds no use case of its
// own and imports no room; rooms import it, never each other.
package usecase
