// The cluster-autoscaler's magnum cloud provider, as it finds a node group's nodes and
// removes one (cluster-autoscaler/cloudprovider/magnum/magnum_manager_impl.go:
// autoDiscoverNodeGroups, fetchNodeGroupStackIDs, getNodes, deleteNodes), making the
// same gophercloud calls in the same order: Magnum's node groups at microversion
// "latest", the node group's Heat stack, its kube_minions resource and nested stack,
// the nested stack's resources and refs_map output, each minion's own resources, and a
// resize naming the node's system UUID.
//
// Usage: autoscaler <API base URL> <project id> <cluster> <node group>. Prints
// "instance openstack:///<server id>" per node, then "resized <cluster uuid>"; on the
// first failure prints "FAIL <step>: <why>" and exits 1. tests/test_clients.py builds
// it with Debian's Go and golang-github-gophercloud-gophercloud-dev.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/gophercloud/gophercloud"
	"github.com/gophercloud/gophercloud/openstack/containerinfra/v1/clusters"
	"github.com/gophercloud/gophercloud/openstack/containerinfra/v1/nodegroups"
	"github.com/gophercloud/gophercloud/openstack/orchestration/v1/stackresources"
	"github.com/gophercloud/gophercloud/openstack/orchestration/v1/stacks"
)

func must(step string, err error) {
	if err != nil {
		fmt.Printf("FAIL %s: %v\n", step, err)
		os.Exit(1)
	}
}

func main() {
	if len(os.Args) != 5 {
		fmt.Println("usage: autoscaler <API base URL> <project id> <cluster> <node group>")
		os.Exit(2)
	}
	base := strings.TrimRight(os.Args[1], "/")
	project, cluster, nodegroup := os.Args[2], os.Args[3], os.Args[4]
	// createMagnumManager: the clients from the catalog's container-infra and
	// orchestration endpoints, Magnum's at the latest microversion.
	magnum := &gophercloud.ServiceClient{ProviderClient: &gophercloud.ProviderClient{},
		Endpoint: base + "/v1/", Type: "container-infra", Microversion: "latest"}
	heat := &gophercloud.ServiceClient{ProviderClient: &gophercloud.ProviderClient{},
		Endpoint: base + "/heat/v1/" + project + "/", Type: "orchestration"}

	// autoDiscoverNodeGroups
	pages, err := nodegroups.List(magnum, cluster, nodegroups.ListOpts{}).AllPages()
	must("nodegroups list", err)
	groups, err := nodegroups.ExtractNodeGroups(pages)
	must("nodegroups extract", err)
	found := false
	for _, group := range groups {
		detail, err := nodegroups.Get(magnum, cluster, group.UUID).Extract()
		must("nodegroup get "+group.Name, err)
		found = found || detail.Name == nodegroup
	}
	if !found {
		must("nodegroups", fmt.Errorf("no node group %s among %d", nodegroup, len(groups)))
	}

	// fetchNodeGroupStackIDs
	ng, err := nodegroups.Get(magnum, cluster, nodegroup).Extract()
	must("nodegroup get", err)
	if ng.StackID == "" {
		must("nodegroup stack_id", fmt.Errorf("empty"))
	}
	stack, err := stacks.Find(heat, ng.StackID).Extract()
	must("node group stack find", err)
	minionsResource, err := stackresources.Get(heat, stack.Name, ng.StackID, "kube_minions").Extract()
	must("kube_minions resource get", err)
	minionsID := minionsResource.PhysicalID
	minionsStack, err := stacks.Find(heat, minionsID).Extract()
	must("kube_minions stack find", err)

	// getNodes
	resourcePages, err := stackresources.List(heat, minionsStack.Name, minionsID, nil).AllPages()
	must("minion resources list", err)
	minions, err := stackresources.ExtractResources(resourcePages)
	must("minion resources extract", err)
	full, err := stacks.Get(heat, minionsStack.Name, minionsID).Extract()
	must("kube_minions stack get", err)
	refs := map[string]string{}
	for _, output := range full.Outputs {
		if output["output_key"] == "refs_map" {
			for index, id := range output["output_value"].(map[string]interface{}) {
				refs[index] = id.(string)
			}
		}
	}
	var servers []string
	for _, minion := range minions {
		// What it reads of a minion in UPDATE_IN_PROGRESS: its own stack's resources.
		own, err := stackresources.Find(heat, minion.PhysicalID).Extract()
		must("minion "+minion.Name+" resources find", err)
		statuses := map[string]string{}
		for _, resource := range own {
			statuses[resource.Name] = resource.Status
		}
		server, known := refs[minion.Name]
		if minion.Status != "CREATE_COMPLETE" || !known || server == "kube-minion" ||
			statuses["kube-minion"] != "CREATE_COMPLETE" ||
			statuses["node_config_deployment"] != "CREATE_COMPLETE" {
			must("minion "+minion.Name, fmt.Errorf("not a running node: %s, refs_map %q, %v",
				minion.Status, server, statuses))
		}
		fmt.Printf("instance openstack:///%s\n", server)
		servers = append(servers, server)
	}
	if len(servers) != ng.NodeCount {
		must("instances", fmt.Errorf("%d instances for node_count %d", len(servers), ng.NodeCount))
	}

	// deleteNodes: the node count less one, naming the node by its system UUID.
	count := ng.NodeCount - 1
	uuid, err := clusters.Resize(magnum, cluster, clusters.ResizeOpts{
		NodeCount: &count, NodesToRemove: []string{servers[0]}, NodeGroup: nodegroup}).Extract()
	must("resize", err)
	fmt.Printf("resized %s\n", uuid)
}
