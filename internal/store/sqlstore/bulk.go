package sqlstore

import (
	"context"
	"strings"
)

// splitCols turns a column list ("a, b,\n\tc") into names.
func splitCols(cols string) []string {
	out := strings.Split(cols, ",")
	for i, c := range out {
		out[i] = strings.TrimSpace(c)
	}
	return out
}

// chunks splits n rows into the sizes of the multi-row statements that
// carry them, at most top each. On a backend that caches prepared
// statements by their text (SQLite, FixedShapes) the sizes come from a
// short fixed list (ladder); elsewhere (PostgreSQL, which plans a VALUES
// join per run) as few statements as possible.
func (t requestTx) chunks(n, top int) []int {
	if f, ok := t.c.(interface{ FixedShapes() bool }); ok && f.FixedShapes() {
		return ladder(n, top)
	}
	var out []int
	for ; n > 0; n -= min(n, top) {
		out = append(out, min(n, top))
	}
	return out
}

// ladder splits n rows into chunks whose sizes come from a short fixed
// list (256, 64, 16, 4, 1, none above top), largest first. A multi-row
// statement then comes in a few shapes, which a statement cache keeps
// prepared: parsing a statement of hundreds of rows anew for every batch
// is a large part of its cost on SQLite.
func ladder(n, top int) []int {
	var out []int
	for _, size := range []int{256, 64, 16, 4, 1} {
		if size > top && size > 1 {
			continue
		}
		for n >= size {
			out = append(out, size)
			n -= size
		}
	}
	return out
}

// insertRows inserts rows into table in bulk: with COPY when the backend
// offers it (PostgreSQL), else in multi-row INSERT statements of at most
// chunk rows, sized by ladder (chunk times the columns must stay below
// the parameter limits: 32766 on SQLite, 65535 on PostgreSQL). A unique
// violation is ErrConflict and ends the transaction.
func (t requestTx) insertRows(ctx context.Context, table string, cols []string, rows [][]any, chunk int) error {
	if len(rows) == 0 {
		return nil
	}
	if cp, ok := t.c.(Copier); ok && len(rows) > 1 {
		_, err := cp.CopyFrom(ctx, table, cols, rows)
		return err
	}
	one := "(?" + strings.Repeat(", ?", len(cols)-1) + ")"
	head := `INSERT INTO ` + table + ` (` + strings.Join(cols, ", ") + `) VALUES ` + one
	start := 0
	for _, size := range t.chunks(len(rows), chunk) {
		part := rows[start : start+size]
		start += size
		args := make([]any, 0, len(part)*len(cols))
		for _, r := range part {
			args = append(args, r...)
		}
		if _, err := t.c.Exec(ctx, head+strings.Repeat(", "+one, len(part)-1), args...); err != nil {
			return err
		}
	}
	return nil
}
