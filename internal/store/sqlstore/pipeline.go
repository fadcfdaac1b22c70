package sqlstore

import "context"

// Pipelined reads: a verb that needs several independent reads (none
// takes a value from another's answer) hands them over together, and a
// backend that can send them in one round trip does (PostgreSQL's batch).
// A send by recipient id and category needed four or five round trips at
// acceptance; pipelined it needs one.

// Read is one statement of a pipeline and what scans its rows.
type Read struct {
	SQL  string
	Args []any
	Scan func(Rows) error
}

// Pipeliner is an optional part of a Conn: it runs reads in one round
// trip, scanning their answers in order.
type Pipeliner interface {
	Pipeline(ctx context.Context, reads []Read) error
}

// pipeline runs reads on c in one round trip where the backend can, else
// one after another.
func pipeline(ctx context.Context, c Querier, reads []Read) error {
	if p, ok := c.(Pipeliner); ok {
		return p.Pipeline(ctx, reads)
	}
	for _, r := range reads {
		rows, err := c.Query(ctx, r.SQL, r.Args...)
		if err != nil {
			return err
		}
		err = r.Scan(rows)
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// collect is a Read's Scan that appends each row, scanned by scan, to dst.
func collect[T any](dst *[]T, scan func(Row) (T, error)) func(Rows) error {
	return func(rows Rows) error {
		for rows.Next() {
			v, err := scan(rows)
			if err != nil {
				return err
			}
			*dst = append(*dst, v)
		}
		return nil
	}
}
