package dash

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/repo"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// TestGrafanaDashboard keeps docs/grafana-trafikey.json true to /metrics:
// it parses, and every series its panels query is one the dashboard
// serves.
func TestGrafanaDashboard(t *testing.T) {
	t.Parallel()
	root, err := repo.Root()
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(root, "docs", "grafana-trafikey.json"))
	require.NoError(t, err)
	var board struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(raw, &board))
	require.Equal(t, "trafikey", board.Title)
	var names []string
	for _, p := range board.Panels {
		require.NotEmpty(t, p.Targets, p.Title)
		for _, tg := range p.Targets {
			names = append(names, regexp.MustCompile(`trafikey_[a-z_]+`).FindAllString(tg.Expr, -1)...)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	require.GreaterOrEqual(t, len(names), 10)

	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	q, err := trafikey.Open(t.Context(), c, "mail", nil)
	require.NoError(t, err)
	_, err = q.Add(t.Context(), []byte("x"), &trafikey.JobOptions{Lane: "tenant-1"})
	require.NoError(t, err)
	// a partitioned queue, for the per-partition series
	_, err = trafikey.Open(t.Context(), c, "bulk", &trafikey.QueueOptions{Partitions: 2})
	require.NoError(t, err)
	srv := startDash(t, c, Options{MetricsLanes: 10})
	var body string
	require.Eventually(t, func() bool {
		var code int
		code, body, _ = get(t, srv, "/metrics")
		return code == http.StatusOK && strings.Contains(body, `trafikey_queue_jobs{queue="mail"`) && strings.Contains(body, `trafikey_queue_partition_jobs{partition="bulk~1`)
	}, 10*time.Second, 20*time.Millisecond)
	for _, n := range append(names, "trafikey_lane_jobs", "trafikey_lane_cap", "trafikey_lane_paused") {
		require.Regexp(t, `(?m)^`+n+`[{ ]`, body, "the Grafana dashboard queries %s", n)
	}
}
