package main

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/scrapers"
)

// sourceOptions say where the sources' HTTP goes: the network, or a recorded folder.
type sourceOptions struct {
	recordDir string // save every response here
	replayDir string // serve every request from here instead of the network
}

// buildSources returns the enabled providers' sources, sharing one HTTP client. names selects a
// subset of the configured providers (empty: all of them).
func buildSources(cfg config.Config, e env, logger *slog.Logger, names []string, so sourceOptions) ([]pipeline.Source, error) {
	if len(names) == 0 {
		names = cfg.Scrape.Providers
	}
	keys, clientIDs := map[string]string{}, map[string]string{}
	for _, name := range names {
		pc, ok := config.Provider(cfg, name)
		if !ok {
			return nil, fmt.Errorf("unknown provider %q (want some of %s)", name, strings.Join(config.ProviderNames, ", "))
		}
		key, err := pc.APIKey(e.getenv)
		if err != nil {
			return nil, fmt.Errorf("provider %s: %w", name, err)
		}
		id, err := pc.ClientID(e.getenv)
		if err != nil {
			return nil, fmt.Errorf("provider %s: %w", name, err)
		}
		if name == scrapers.TensorDockName && key == "" { // its API answers only to a token
			where := "set " + pc.APIKeyEnv + " (providers.tensordock.api_key_env) or providers.tensordock.api_key_file"
			switch {
			case pc.APIKeyFile != "":
				where = "the file providers.tensordock.api_key_file names is empty"
			case pc.APIKeyEnv == "":
				where = "set providers.tensordock.api_key_env or api_key_file"
			}
			return nil, fmt.Errorf("provider %s: no API key: %s", name, where)
		}
		keys[name], clientIDs[name] = key, id
		e.secrets.AddSent(key, id) // a key the configuration did not load (a test's) is a secret too
	}
	client, err := scrapers.NewClient(scrapers.ClientConfig{
		UserAgent:       cfg.HTTP.UserAgent,
		RetryMax:        cfg.HTTP.RetryMax,
		RetryWaitMin:    cfg.HTTP.RetryWaitMin.Std(),
		RetryWaitMax:    cfg.HTTP.RetryWaitMax.Std(),
		AttemptTimeout:  cfg.HTTP.AttemptTimeout.Std(),
		MaxBodyBytes:    cfg.HTTP.MaxBodyBytes,
		MaxSourceBytes:  cfg.HTTP.MaxSourceBytes,
		MaxSourceOffers: cfg.HTTP.MaxSourceOffers,
		Logger:          logger,
		Redactor:        e.secrets,
		RecordDir:       so.recordDir,
		ReplayDir:       so.replayDir,
	})
	if err != nil {
		return nil, err
	}
	// A replay serves recorded bytes: the politeness delays meant for live hosts only slow it.
	noDelay := so.replayDir != ""
	delay := func(d config.Duration) config.Duration {
		if noDelay {
			return -1
		}
		return d
	}
	var out []pipeline.Source
	for _, name := range names {
		switch name {
		case scrapers.VastName:
			p := cfg.Providers.VastAI
			out = append(out, scrapers.NewVast(client, scrapers.VastConfig{URL: p.URL, APIKey: keys[name], PageLimit: p.PageLimit, RequestInterval: delay(p.Delay).Std()}, logger))
		case scrapers.RunPodName:
			p := cfg.Providers.RunPod
			out = append(out, scrapers.NewRunPod(client, scrapers.RunPodConfig{URL: p.URL, CatalogURL: p.CatalogURL, APIKey: keys[name]}, logger))
		case scrapers.LambdaName:
			p := cfg.Providers.Lambda
			out = append(out, scrapers.NewLambda(client, scrapers.LambdaConfig{APIURL: p.URL, PageURL: p.PageURL, APIKey: keys[name],
				Timeout: cfg.Scrape.SourceTimeout.Std(), Delay: delay(p.Delay).Std()}, logger))
		case scrapers.CoreWeaveName:
			p := cfg.Providers.CoreWeave
			out = append(out, scrapers.NewCoreWeave(client, scrapers.CoreWeaveConfig{URL: p.URL,
				Timeout: cfg.Scrape.SourceTimeout.Std(), Delay: delay(p.Delay).Std()}, logger))
		case scrapers.VerdaName:
			p := cfg.Providers.Verda
			out = append(out, scrapers.NewVerda(client, scrapers.VerdaConfig{APIURL: p.URL, PageURL: p.PageURL,
				ClientID: clientIDs[name], ClientSecret: keys[name],
				Timeout: cfg.Scrape.SourceTimeout.Std(), Delay: delay(p.Delay).Std()}, logger))
		case scrapers.OCIName:
			p := cfg.Providers.OCI
			out = append(out, scrapers.NewOCI(client, scrapers.OCIConfig{ProductsURL: p.URL, ShapesURL: p.ShapesURL}, logger))
		case scrapers.VultrName:
			p := cfg.Providers.Vultr
			out = append(out, scrapers.NewVultr(client, scrapers.VultrConfig{PlansURL: p.URL, MetalURL: p.MetalURL, APIKey: keys[name],
				Timeout: cfg.Scrape.SourceTimeout.Std()}, logger))
		case scrapers.TensorDockName:
			p := cfg.Providers.TensorDock
			out = append(out, scrapers.NewTensorDock(client, scrapers.TensorDockConfig{URL: p.URL, APIKey: keys[name],
				Timeout: cfg.Scrape.SourceTimeout.Std()}, logger))
		case scrapers.NebiusName:
			p := cfg.Providers.Nebius
			out = append(out, scrapers.NewNebius(client, scrapers.NebiusConfig{URL: p.URL,
				Timeout: cfg.Scrape.SourceTimeout.Std(), Delay: delay(p.Delay).Std()}, logger))
		case scrapers.DigitalOceanName:
			p := cfg.Providers.DigitalOcean
			out = append(out, scrapers.NewDigitalOcean(client, scrapers.DigitalOceanConfig{APIURL: p.URL, PageURL: p.PageURL, APIKey: keys[name],
				Timeout: cfg.Scrape.SourceTimeout.Std(), Delay: delay(p.Delay).Std()}, logger))
		case scrapers.HyperstackName:
			p := cfg.Providers.Hyperstack
			out = append(out, scrapers.NewHyperstack(client, scrapers.HyperstackConfig{APIURL: p.URL, PageURL: p.PageURL, APIKey: keys[name],
				Timeout: cfg.Scrape.SourceTimeout.Std(), Delay: delay(p.Delay).Std()}, logger))
		}
	}
	return out, nil
}
