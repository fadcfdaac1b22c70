package storetest_test

import (
	"testing"

	"github.com/notifyd/notifyd/internal/store/storetest"
)

func TestConformance(t *testing.T) { storetest.RunAll(t) }

func TestConfigCacheAcrossStores(t *testing.T)      { storetest.ConfigCacheAcrossStores(t) }
func TestWorkflowCacheAcrossStores(t *testing.T)    { storetest.WorkflowCacheAcrossStores(t) }
func TestProfileCacheAcrossStores(t *testing.T)     { storetest.ProfileCacheAcrossStores(t) }
func TestProfileCacheConcurrentMisses(t *testing.T) { storetest.ProfileCacheConcurrentMisses(t) }
