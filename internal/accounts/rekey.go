package accounts

import (
	"context"
	"fmt"

	"github.com/notifyd/notifyd/internal/notify"
)

// Rekey re-seals every stored secret that is not sealed with the box's
// primary key (NOTIFYD_SECRET_KEY) under it, reading with the previous keys
// (NOTIFYD_SECRET_KEY_PREVIOUS), in one transaction: either all are moved
// to the new key or none is. It returns how many were re-sealed.
func (s *Service) Rekey(ctx context.Context) (int, error) {
	var n int
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		n = 0
		vs, err := tx.FindSealedValues(ctx, s.box.PrimaryKeyID())
		if err != nil {
			return err
		}
		for _, v := range vs {
			aad := notify.SealedAAD(v.Kind, v.ID)
			if aad == "" {
				return fmt.Errorf("rekey: unknown sealed value kind %q", v.Kind)
			}
			plain, err := s.box.OpenFor(aad, v.Value)
			if err != nil {
				return fmt.Errorf("rekey: %s of %s: %w", v.Kind, v.ID, err)
			}
			sealed, err := s.box.SealFor(aad, plain)
			if err != nil {
				return err
			}
			if err := tx.UpdateSealedValue(ctx, v, sealed); err != nil {
				return fmt.Errorf("rekey: %s of %s: %w", v.Kind, v.ID, err)
			}
			n++
		}
		return nil
	})
	return n, err
}
