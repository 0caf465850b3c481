// A cluster's whole life through gophercloud, the Go SDK under Terraform's
// OpenStack provider, called the way the provider's containerinfra resources
// call it (openstack_containerinfra_clustertemplate_v1, _cluster_v1,
// _nodegroup_v1 and the kubeconfig it builds from the certificate endpoints).
//
// Usage: lifecycle <API base URL>. Prints "ok <step>" per step; on the first
// failure prints "FAIL <step>: <why>" and exits 1. tests/test_clients.py
// builds it with Debian's Go and golang-github-gophercloud-gophercloud-dev.
package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud"
	"github.com/gophercloud/gophercloud/openstack/containerinfra/v1/certificates"
	"github.com/gophercloud/gophercloud/openstack/containerinfra/v1/clusters"
	"github.com/gophercloud/gophercloud/openstack/containerinfra/v1/clustertemplates"
	"github.com/gophercloud/gophercloud/openstack/containerinfra/v1/nodegroups"
	"github.com/gophercloud/gophercloud/openstack/containerinfra/v1/quotas"
)

func check(step string, err error, ok bool, why string, args ...interface{}) {
	if err != nil {
		fmt.Printf("FAIL %s: %v\n", step, err)
		os.Exit(1)
	}
	if !ok {
		fmt.Printf("FAIL %s: %s\n", step, fmt.Sprintf(why, args...))
		os.Exit(1)
	}
	fmt.Printf("ok %s\n", step)
}

// settle polls the cluster as the provider's StateRefreshFunc does: a 404 is
// DELETE_COMPLETE, an *_FAILED status is an error.
func settle(client *gophercloud.ServiceClient, id string) string {
	for start := time.Now(); time.Since(start) < 3*time.Minute; time.Sleep(time.Second) {
		c, err := clusters.Get(client, id).Extract()
		if err != nil {
			if _, gone := err.(gophercloud.ErrDefault404); gone {
				return "DELETE_COMPLETE"
			}
			return "error: " + err.Error()
		}
		if strings.HasSuffix(c.Status, "_FAILED") {
			return c.Status + ": " + c.StatusReason
		}
		if !strings.HasSuffix(c.Status, "_IN_PROGRESS") {
			return c.Status
		}
	}
	return "timed out"
}

func settleNodeGroup(client *gophercloud.ServiceClient, cluster, id string) string {
	for start := time.Now(); time.Since(start) < 3*time.Minute; time.Sleep(time.Second) {
		ng, err := nodegroups.Get(client, cluster, id).Extract()
		if err != nil {
			if _, gone := err.(gophercloud.ErrDefault404); gone {
				return "DELETE_COMPLETE"
			}
			return "error: " + err.Error()
		}
		if strings.HasSuffix(ng.Status, "_FAILED") {
			return ng.Status + ": " + ng.StatusReason
		}
		if !strings.HasSuffix(ng.Status, "_IN_PROGRESS") {
			return ng.Status
		}
	}
	return "timed out"
}

func statusCode(err error) int {
	if coder, ok := err.(interface{ GetStatusCode() int }); ok {
		return coder.GetStatusCode()
	}
	if e, ok := err.(gophercloud.ErrUnexpectedResponseCode); ok {
		return e.Actual
	}
	return 0
}

// kubeconfigCredential is the provider's flattenContainerInfraV1Kubeconfig:
// the CA, and a client certificate signed for a fresh key's CSR.
func kubeconfigCredential(client *gophercloud.ServiceClient, id string) (*x509.Certificate, *x509.Certificate, error) {
	ca, err := certificates.Get(client, id).Extract()
	if err != nil {
		return nil, nil, err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, nil, err
	}
	csr, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		SignatureAlgorithm: x509.SHA512WithRSA,
		Subject: pkix.Name{CommonName: "admin", Organization: []string{"system:masters"},
			OrganizationalUnit: []string{"terraform"}},
	}, key)
	if err != nil {
		return nil, nil, err
	}
	signed, err := certificates.Create(client, certificates.CreateOpts{
		ClusterUUID: id,
		CSR:         string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: csr})),
	}).Extract()
	if err != nil {
		return nil, nil, err
	}
	caCert, err := parsePEM(ca.PEM)
	if err != nil {
		return nil, nil, fmt.Errorf("CA: %v", err)
	}
	cert, err := parsePEM(signed.PEM)
	if err != nil {
		return nil, nil, fmt.Errorf("client certificate: %v", err)
	}
	return caCert, cert, nil
}

func parsePEM(text string) (*x509.Certificate, error) {
	block, _ := pem.Decode([]byte(text))
	if block == nil {
		return nil, fmt.Errorf("no PEM block in %q", text)
	}
	return x509.ParseCertificate(block.Bytes)
}

func verifies(ca, cert *x509.Certificate) error {
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	_, err := cert.Verify(x509.VerifyOptions{Roots: roots,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	return err
}

func intp(v int) *int    { return &v }
func boolp(v bool) *bool { return &v }

func main() {
	if len(os.Args) != 2 {
		fmt.Println("usage: lifecycle <API base URL>")
		os.Exit(2)
	}
	// As openstack.NewContainerInfraV1 makes it from a catalog entry .../v1
	client := &gophercloud.ServiceClient{
		ProviderClient: &gophercloud.ProviderClient{},
		Endpoint:       strings.TrimRight(os.Args[1], "/") + "/v1/",
		Type:           "container-infra",
	}

	// openstack_containerinfra_clustertemplate_v1
	tpl, err := clustertemplates.Create(client, clustertemplates.CreateOpts{
		Name: "tf-tpl", COE: "kubernetes", ImageID: "debian-12", ExternalNetworkID: "public",
		KeyPairID: "kp", DockerVolumeSize: intp(5), MasterLBEnabled: boolp(false),
		FloatingIPEnabled: boolp(true), NetworkDriver: "flannel",
		Labels: map[string]string{"kube_tag": "v1.30.1"},
	}).Extract()
	check("template create", err, err == nil && tpl.UUID != "" && tpl.DockerVolumeSize == 5 &&
		tpl.Labels["kube_tag"] == "v1.30.1" && !tpl.CreatedAt.IsZero(), "got %+v", tpl)

	// the provider's update sends every value as a string, labels as "k=v,k=v"
	_, err = clustertemplates.Update(client, tpl.UUID, []clustertemplates.UpdateOptsBuilder{
		clustertemplates.UpdateOpts{Op: clustertemplates.ReplaceOp, Path: "/labels",
			Value: "kube_tag=v1.30.1,foo=bar"},
		clustertemplates.UpdateOpts{Op: clustertemplates.ReplaceOp, Path: "/docker_volume_size",
			Value: "10"},
		clustertemplates.UpdateOpts{Op: clustertemplates.ReplaceOp, Path: "/master_lb_enabled",
			Value: "true"},
		clustertemplates.UpdateOpts{Op: clustertemplates.ReplaceOp, Path: "/flavor_id",
			Value: "m1.large"},
	}).Extract()
	check("template update (string values)", err, true, "")
	tpl, err = clustertemplates.Get(client, tpl.UUID).Extract()
	check("template get", err, err == nil && tpl.DockerVolumeSize == 10 && tpl.MasterLBEnabled &&
		tpl.FlavorID == "m1.large" && reflect.DeepEqual(tpl.Labels,
		map[string]string{"kube_tag": "v1.30.1", "foo": "bar"}), "got %+v", tpl)
	_, err = clustertemplates.Update(client, tpl.UUID, []clustertemplates.UpdateOptsBuilder{
		clustertemplates.UpdateOpts{Op: clustertemplates.ReplaceOp, Path: "/master_lb_enabled",
			Value: "false"},
		clustertemplates.UpdateOpts{Op: clustertemplates.RemoveOp, Path: "/flavor_id"},
	}).Extract()
	tpl, _ = clustertemplates.Get(client, tpl.UUID).Extract()
	check("template update (remove)", err, err == nil && !tpl.MasterLBEnabled &&
		tpl.FlavorID != "m1.large", "got %+v", tpl)
	byName, err := clustertemplates.Get(client, "tf-tpl").Extract() // the data source's lookup
	check("template get by name", err, err == nil && byName.UUID == tpl.UUID, "got %+v", byName)
	pages, err := clustertemplates.List(client, clustertemplates.ListOpts{}).AllPages()
	all, _ := clustertemplates.ExtractClusterTemplates(pages)
	check("template list", err, err == nil && len(all) == 1 && all[0].Name == "tf-tpl", "got %+v", all)

	// openstack_containerinfra_cluster_v1: create_timeout goes as null when unset
	id, err := clusters.Create(client, clusters.CreateOpts{
		Name: "tf-c1", ClusterTemplateID: tpl.UUID, MasterCount: intp(1), NodeCount: intp(1),
		FloatingIPEnabled: boolp(false), Labels: map[string]string{"kube_tag": "v1.30.1"},
	}).Extract()
	check("cluster create", err, id != "", "no uuid")
	status := settle(client, id)
	check("cluster CREATE_COMPLETE", nil, status == "CREATE_COMPLETE", "ended %s", status)
	c, err := clusters.Get(client, id).Extract()
	check("cluster get", err, err == nil && c.Name == "tf-c1" && c.NodeCount == 1 &&
		c.MasterCount == 1 && c.CreateTimeout == 60 && c.APIAddress != "" &&
		c.ClusterTemplateID == tpl.UUID && !c.CreatedAt.IsZero(), "got %+v", c)
	named, err := clusters.Get(client, "tf-c1").Extract()
	check("cluster get by name", err, err == nil && named.UUID == id, "got %+v", named)
	cpages, err := clusters.ListDetail(client, clusters.ListOpts{}).AllPages()
	listed, _ := clusters.ExtractClusters(cpages)
	check("cluster list detail", err, err == nil && len(listed) == 1 && listed[0].UUID == id,
		"got %+v", listed)
	err = clustertemplates.Delete(client, tpl.UUID).ExtractErr()
	check("template delete refused while used", nil, statusCode(err) == 400, "got %v", err)

	// the kubeconfig the provider builds
	ca, cert, err := kubeconfigCredential(client, id)
	check("kubeconfig credential", err, err == nil && verifies(ca, cert) == nil &&
		reflect.DeepEqual(cert.Subject.Organization, []string{"system:masters"}),
		"verify: %v, subject %v", verifies(ca, cert), cert.Subject)

	// node_count through a JSON patch whose value is a string, as the provider sends it
	_, err = clusters.Update(client, id, []clusters.UpdateOptsBuilder{
		clusters.UpdateOpts{Op: clusters.ReplaceOp, Path: "/node_count", Value: "2"},
	}).Extract()
	check("cluster update node_count", err, true, "")
	status = settle(client, id)
	c, _ = clusters.Get(client, id).Extract()
	check("cluster UPDATE_COMPLETE", nil, status == "UPDATE_COMPLETE" && c.NodeCount == 2,
		"ended %s with %d nodes", status, c.NodeCount)

	// resize needs microversion 1.7, as in Magnum
	_, err = clusters.Resize(client, id, clusters.ResizeOpts{NodeCount: intp(1)}).Extract()
	check("resize without a microversion refused", nil, statusCode(err) == 406, "got %v", err)
	client.Microversion = "1.7"
	_, err = clusters.Resize(client, id, clusters.ResizeOpts{NodeCount: intp(1)}).Extract()
	check("resize at 1.7", err, true, "")
	status = settle(client, id)
	c, _ = clusters.Get(client, id).Extract()
	check("resized", nil, status == "UPDATE_COMPLETE" && c.NodeCount == 1,
		"ended %s with %d nodes", status, c.NodeCount)

	// openstack_containerinfra_nodegroup_v1 (microversion 1.9)
	client.Microversion = "1.9"
	ngPages, err := nodegroups.List(client, id, nodegroups.ListOpts{}).AllPages()
	groups, _ := nodegroups.ExtractNodeGroups(ngPages)
	names := []string{}
	for _, g := range groups {
		names = append(names, g.Name)
	}
	check("nodegroup list", err, err == nil &&
		reflect.DeepEqual(names, []string{"default-master", "default-worker"}), "got %v", names)
	ng, err := nodegroups.Create(client, id, nodegroups.CreateOpts{
		Name: "tf-ng", NodeCount: intp(1), Role: "test", MaxNodeCount: intp(3),
		Labels: map[string]string{"zone": "a"},
	}).Extract()
	check("nodegroup create", err, err == nil && ng.UUID != "", "got %+v", ng)
	status = settleNodeGroup(client, id, ng.UUID)
	check("nodegroup CREATE_COMPLETE", nil, status == "CREATE_COMPLETE", "ended %s", status)
	_, err = nodegroups.Update(client, id, ng.UUID, []nodegroups.UpdateOptsBuilder{
		nodegroups.UpdateOpts{Op: nodegroups.ReplaceOp, Path: "/max_node_count", Value: "5"},
		nodegroups.UpdateOpts{Op: nodegroups.ReplaceOp, Path: "/min_node_count", Value: "1"},
	}).Extract()
	check("nodegroup update", err, true, "")
	settleNodeGroup(client, id, ng.UUID)
	ng, err = nodegroups.Get(client, id, "tf-ng").Extract()
	check("nodegroup get by name", err, err == nil && ng.MaxNodeCount != nil &&
		*ng.MaxNodeCount == 5 && ng.MinNodeCount == 1 && ng.Role == "test" &&
		ng.Labels["zone"] == "a" && !ng.IsDefault, "got %+v", ng)
	_, err = nodegroups.Create(client, id, nodegroups.CreateOpts{Name: "m", Role: "master"}).Extract()
	check("nodegroup role master refused", nil, statusCode(err) == 400, "got %v", err)
	err = nodegroups.Delete(client, id, "default-worker").ExtractErr()
	check("default nodegroup delete refused", nil, statusCode(err) == 400, "got %v", err)
	err = nodegroups.Delete(client, id, ng.UUID).ExtractErr()
	check("nodegroup delete", err, true, "")
	status = settleNodeGroup(client, id, ng.UUID)
	check("nodegroup gone", nil, status == "DELETE_COMPLETE", "ended %s", status)
	client.Microversion = ""
	settle(client, id)

	// CA rotation (microversion 1.5, which Magnum 23 does not enforce for this call):
	// the old client certificate no longer verifies
	client.Microversion = "1.5"
	err = certificates.Update(client, id).ExtractErr()
	check("ca rotate at 1.5", err, true, "")
	client.Microversion = ""
	status = settle(client, id)
	newCA, newCert, err := kubeconfigCredential(client, id)
	check("rotated", err, status == "UPDATE_COMPLETE" && verifies(newCA, cert) != nil &&
		verifies(newCA, newCert) == nil, "ended %s", status)

	// quotas (admin)
	_, err = quotas.Create(client, quotas.CreateOpts{ProjectID: "tf-project", Resource: "Cluster",
		HardLimit: 3}).Extract()
	check("quota create", err, true, "")

	// delete: polled until 404, then the template
	err = clusters.Delete(client, id).ExtractErr()
	check("cluster delete", err, true, "")
	status = settle(client, id)
	check("cluster gone", nil, status == "DELETE_COMPLETE", "ended %s", status)
	err = clustertemplates.Delete(client, tpl.UUID).ExtractErr()
	check("template delete", err, true, "")
	_, err = clustertemplates.Get(client, tpl.UUID).Extract()
	_, gone := err.(gophercloud.ErrDefault404)
	check("template gone", nil, gone, "got %v", err)
}
