//! The registry: every dataset file netheat uses, with its provenance.
//!
//! This static table is the provenance record. For each file it gives the
//! path relative to the data directory, the upstream repository, commit and
//! path it was taken from (see `SOURCES.md` in the data directory), its
//! SHA-256 and size (see `SHA256SUMS`), the parser that reads it and a
//! one-line description. Nothing here is copied data: only names and hashes.

use crate::cdf::CdfFormat;

/// Where a file comes from upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Upstream {
    /// GitHub `owner/name`.
    pub repo: &'static str,
    /// Commit (abbreviated, as recorded in `SOURCES.md`).
    pub commit: &'static str,
    /// Path inside the repository (for derived files, the file it was derived from).
    pub path: &'static str,
}

impl Upstream {
    /// A browsable URL of the upstream file at the recorded commit.
    pub fn url(&self) -> String {
        format!("https://github.com/{}/blob/{}/{}", self.repo, self.commit, self.path)
    }
}

impl std::fmt::Display for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}@{} {}", self.repo, self.commit, self.path)
    }
}

/// Which parser reads a dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Coflow-Benchmark trace ([`crate::coflow`]).
    Coflow,
    /// A flow/message-size CDF ([`crate::cdf`]).
    Cdf(CdfFormat),
    /// A parsimon rack-to-rack traffic matrix JSON ([`crate::spatial`]).
    TrafficMatrix,
    /// CloudSimPy `jobs.csv` task rows ([`crate::alibaba`]).
    CloudSimPyJobs,
    /// Alibaba gpu-v2023 pod list CSV ([`crate::alibaba`]).
    GpuPods,
    /// Alibaba gpu-v2023 node list CSV ([`crate::alibaba`]).
    GpuNodes,
    /// Alibaba v2018 `machine_meta.csv` ([`crate::alibaba`]).
    MachineMeta,
    /// Alibaba v2018 `machine_usage.csv` rows ([`crate::alibaba`]).
    MachineUsage,
}

impl Format {
    /// Short name of the format, e.g. `cdf-percent` or `coflow`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Format::Coflow => "coflow",
            Format::Cdf(c) => c.as_str(),
            Format::TrafficMatrix => "traffic-matrix",
            Format::CloudSimPyJobs => "cloudsimpy-jobs",
            Format::GpuPods => "gpu-pods",
            Format::GpuNodes => "gpu-nodes",
            Format::MachineMeta => "machine-meta",
            Format::MachineUsage => "machine-usage",
        }
    }

    /// Broad kind: `coflows`, `cdf`, `traffic-matrix` or `table`.
    pub fn kind(&self) -> &'static str {
        match self {
            Format::Coflow => "coflows",
            Format::Cdf(_) => "cdf",
            Format::TrafficMatrix => "traffic-matrix",
            _ => "table",
        }
    }
}

/// One registered dataset file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dataset {
    /// Registry name, e.g. `coflow-fb2010`.
    pub name: &'static str,
    /// Path relative to the data directory.
    pub path: &'static str,
    /// Where the file comes from.
    pub upstream: Upstream,
    /// SHA-256 of the file (lower-case hex).
    pub sha256: &'static str,
    /// Size in bytes.
    pub size: u64,
    /// The parser that reads it.
    pub format: Format,
    /// One-line description.
    pub description: &'static str,
}

const HPCC: &str = "alibaba-edu/High-Precision-Congestion-Control";
const HPCC_C: &str = "9f4be2a9ead8";
const HOMA: &str = "PlatformLab/HomaSimulation";
const HOMA_C: &str = "ab09ecbf2c61";
const HOMAMOD: &str = "PlatformLab/HomaModule";
const HOMAMOD_C: &str = "9edb95896ba8";
const HKUST: &str = "HKUST-SING/TrafficGenerator";
const HKUST_C: &str = "8e7c51680890";
const PARSIMON: &str = "uw-polestar/parsimon-eval";
const PARSIMON_C: &str = "4d612d05564c";
const ALI: &str = "alibaba/clusterdata";
const ALI_C: &str = "7a6c496e4f4b";

/// Payload bytes per packet assumed for the Homa DCTCP files, whose sizes are
/// in packets: HomaSimulation's `sizeDistributions/adjustLoadFac.py` scales
/// `DCTCP_MsgSizeDist.txt` by a size factor of 1460 (the TCP MSS of a
/// 1500-byte Ethernet MTU).
pub const HOMA_DCTCP_BYTES_PER_PACKET: u32 = 1460;

const PCT: Format = Format::Cdf(CdfFormat::Percent);
const FRAC: Format = Format::Cdf(CdfFormat::Fraction);
const HOMA_B: Format = Format::Cdf(CdfFormat::HomaMeanFirst { bytes_per_unit: 1 });
const HOMA_P: Format = Format::Cdf(CdfFormat::HomaMeanFirst { bytes_per_unit: HOMA_DCTCP_BYTES_PER_PACKET });

#[allow(clippy::too_many_arguments)]
const fn ds(
    name: &'static str,
    path: &'static str,
    repo: &'static str,
    commit: &'static str,
    upath: &'static str,
    sha256: &'static str,
    size: u64,
    format: Format,
    description: &'static str,
) -> Dataset {
    Dataset { name, path, upstream: Upstream { repo, commit, path: upath }, sha256, size, format, description }
}

/// Every dataset netheat knows, in display order.
pub static DATASETS: &[Dataset] = &[
    ds(
        "coflow-fb2010",
        "coflow-benchmark/FB2010-1Hr-150-0.txt",
        "coflow/coflow-benchmark",
        "90fc587167b8",
        "FB2010-1Hr-150-0.txt",
        "cdd0d94d26c6ab10ce3634cf6a0f836859578e914de6b6faa980a245237dbc6e",
        137746,
        Format::Coflow,
        "Facebook 2010 MapReduce shuffle trace: 526 coflows on 150 racks over one hour",
    ),
    // ---- HPCC traffic_gen CDFs: `<bytes> <cdf_percent>`
    ds(
        "cdf-websearch-hpcc",
        "hpcc_traffic_gen/WebSearch_distribution.txt",
        HPCC,
        HPCC_C,
        "traffic_gen/WebSearch_distribution.txt",
        "523d92fd941790c770a7a4cbdffaf715e043ef9fd4da2db6374852716bee5ed6",
        117,
        PCT,
        "Web search (DCTCP paper) flow sizes, as used by HPCC",
    ),
    ds(
        "cdf-fbhadoop-hpcc",
        "hpcc_traffic_gen/FbHdp_distribution.txt",
        HPCC,
        HPCC_C,
        "traffic_gen/FbHdp_distribution.txt",
        "0cb8d61d7911d633bbd115bb343fd6fb14dcbd3666fe9159bfaa9b1bc101c301",
        165,
        PCT,
        "Facebook Hadoop flow sizes, as used by HPCC",
    ),
    ds(
        "cdf-alistorage-hpcc",
        "hpcc_traffic_gen/AliStorage2019.txt",
        HPCC,
        HPCC_C,
        "traffic_gen/AliStorage2019.txt",
        "9991c9d4b3a836646a41faa0581d779d32b5f433f7bb0931fe3b51656d33adf1",
        100,
        PCT,
        "Alibaba distributed storage flow sizes (2019)",
    ),
    ds(
        "cdf-googlerpc-hpcc",
        "hpcc_traffic_gen/GoogleRPC2008.txt",
        HPCC,
        HPCC_C,
        "traffic_gen/GoogleRPC2008.txt",
        "0104a9dfec281bfd891fd76a32be5dd8a527b78484d88c137fead77091bf9bbb",
        12112,
        PCT,
        "Google RPC sizes (before 2008)",
    ),
    // ---- HomaSimulation sizeDistributions: line 1 = mean, then `<size> <cum_prob>`
    ds(
        "cdf-dctcp-homa",
        "homa_simulation_sizeDistributions/DCTCP_MsgSizeDist.txt",
        HOMA,
        HOMA_C,
        "RpcTransportDesign/OMNeT++Simulation/homatransport/sizeDistributions/DCTCP_MsgSizeDist.txt",
        "4439d5b2feb36e76601138bdba1f3af5631149474917425489a0daa87a791a54",
        7232,
        HOMA_P,
        "DCTCP web search message sizes, interpolated (sizes in packets, x1460 bytes)",
    ),
    ds(
        "cdf-dctcp-original-homa",
        "homa_simulation_sizeDistributions/DCTCP_MsgSizeDist_Original.txt",
        HOMA,
        HOMA_C,
        "RpcTransportDesign/OMNeT++Simulation/homatransport/sizeDistributions/DCTCP_MsgSizeDist_Original.txt",
        "f1640526386a8f6595cd6f0d7f81e70e7b574ee6b43875515160b5e583bf774d",
        107,
        HOMA_P,
        "DCTCP web search message sizes, 11 original points (sizes in packets, x1460 bytes)",
    ),
    ds(
        "cdf-fbhadoop-homa",
        "homa_simulation_sizeDistributions/Facebook_HadoopDist_All.txt",
        HOMA,
        HOMA_C,
        "RpcTransportDesign/OMNeT++Simulation/homatransport/sizeDistributions/Facebook_HadoopDist_All.txt",
        "0032b6f5a3e1a1c7a2b36a899095b37f20c707c37c3f18c91dc219381e557acd",
        6113,
        HOMA_B,
        "Facebook Hadoop message sizes (all traffic)",
    ),
    ds(
        "cdf-fbcache-homa",
        "homa_simulation_sizeDistributions/Facebook_CacheFollowerDist_IntraCluster.txt",
        HOMA,
        HOMA_C,
        "RpcTransportDesign/OMNeT++Simulation/homatransport/sizeDistributions/Facebook_CacheFollowerDist_IntraCluster.txt",
        "9233437a92cba2cbe45f36c161aef869a9c133000ccca201ba807835bb0bd53f",
        4549,
        HOMA_B,
        "Facebook cache follower message sizes (intra-cluster)",
    ),
    ds(
        "cdf-fbweb-homa",
        "homa_simulation_sizeDistributions/Facebook_WebServerDist_IntraCluster.txt",
        HOMA,
        HOMA_C,
        "RpcTransportDesign/OMNeT++Simulation/homatransport/sizeDistributions/Facebook_WebServerDist_IntraCluster.txt",
        "07d1442ca50f60621ae17ade3b0078e0218beb080feab42ee9a47f4698fce579",
        5795,
        HOMA_B,
        "Facebook web server message sizes (intra-cluster)",
    ),
    ds(
        "cdf-fbkv-homa",
        "homa_simulation_sizeDistributions/FacebookKeyValue_Sampled.txt",
        HOMA,
        HOMA_C,
        "RpcTransportDesign/OMNeT++Simulation/homatransport/sizeDistributions/FacebookKeyValue_Sampled.txt",
        "b6b64d5a25bfe755cfd7163518e1dd87f02f336b45794870077e1ed2bd7738f1",
        6887,
        HOMA_B,
        "Facebook memcached key-value message sizes (sampled, with fitted tail)",
    ),
    ds(
        "cdf-googleall-homa",
        "homa_simulation_sizeDistributions/Google_AllRPC.txt",
        HOMA,
        HOMA_C,
        "RpcTransportDesign/OMNeT++Simulation/homatransport/sizeDistributions/Google_AllRPC.txt",
        "278094f9c9618b5f170e4f187d33ce5a6afffb55bda179fc35e6478c6adc9a06",
        20519,
        HOMA_B,
        "Google all-RPC message sizes",
    ),
    ds(
        "cdf-googlesearch-homa",
        "homa_simulation_sizeDistributions/Google_SearchRPC.txt",
        HOMA,
        HOMA_C,
        "RpcTransportDesign/OMNeT++Simulation/homatransport/sizeDistributions/Google_SearchRPC.txt",
        "9a68c51e8466733822590dc9cb3d79f1397ffd73a5e0b2d3b5abb18da10a7987",
        3558,
        HOMA_B,
        "Google search RPC message sizes",
    ),
    // ---- HomaModule W1..W5 (derived from util/dist.cc): `<bytes> <cdf>`, `#` header
    ds(
        "cdf-w1-homamodule",
        "homamodule_workloads/w1_cdf.txt",
        HOMAMOD,
        HOMAMOD_C,
        "util/dist.cc",
        "34bdc8a68bb7466896749108ac40701ece945d57412a27ecd8758a1cf2ad9f4b",
        5054,
        FRAC,
        "Homa W1: Facebook memcached key-value message sizes",
    ),
    ds(
        "cdf-w2-homamodule",
        "homamodule_workloads/w2_cdf.txt",
        HOMAMOD,
        HOMAMOD_C,
        "util/dist.cc",
        "b18f5068d94e983e0266c2780792418774f6c5022101328257157b78a8d3c399",
        2700,
        FRAC,
        "Homa W2: Google search RPC message sizes",
    ),
    ds(
        "cdf-w3-homamodule",
        "homamodule_workloads/w3_cdf.txt",
        HOMAMOD,
        HOMAMOD_C,
        "util/dist.cc",
        "57f274fe7889c26efcf479fbcd37273f55ab9e944540ad1b225bb849737fb1e9",
        15650,
        FRAC,
        "Homa W3: Google all-RPC message sizes",
    ),
    ds(
        "cdf-w4-homamodule",
        "homamodule_workloads/w4_cdf.txt",
        HOMAMOD,
        HOMAMOD_C,
        "util/dist.cc",
        "539dfec2d97f92f5e4802807706f90fe26216a1702f4c24dd3029ef7a348e188",
        8155,
        FRAC,
        "Homa W4: Facebook Hadoop message sizes",
    ),
    ds(
        "cdf-w5-homamodule",
        "homamodule_workloads/w5_cdf.txt",
        HOMAMOD,
        HOMAMOD_C,
        "util/dist.cc",
        "e73eb31e527eaaee0027c3ea5481fd50bbb49cf85e78c2ef4cec90bba55f733d",
        7767,
        FRAC,
        "Homa W5: DCTCP web search message sizes (bytes)",
    ),
    // ---- HKUST TrafficGenerator conf/: `<bytes> <cdf>`
    ds(
        "cdf-dctcp-hkust",
        "hkust_trafficgenerator/DCTCP_CDF.txt",
        HKUST,
        HKUST_C,
        "conf/DCTCP_CDF.txt",
        "704ae0b300136bf4434889784185a53d747ca1291c63f485cd3ce978799aa664",
        132,
        FRAC,
        "DCTCP web search flow sizes (HKUST traffic generator)",
    ),
    ds(
        "cdf-vl2-hkust",
        "hkust_trafficgenerator/VL2_CDF.txt",
        HKUST,
        HKUST_C,
        "conf/VL2_CDF.txt",
        "dd6d222394e80bb440ca062d1961586aa61889bca54773ce1e4b8a204b60b52a",
        127,
        FRAC,
        "VL2 data-mining flow sizes (HKUST traffic generator)",
    ),
    ds(
        "cdf-fb-hkust",
        "hkust_trafficgenerator/FB_CDF.txt",
        HKUST,
        HKUST_C,
        "conf/FB_CDF.txt",
        "f70277f01693d3e8379a42af05e2e20a64313cfad700521ad8f512e8e327fc44",
        178,
        FRAC,
        "Facebook memcached flow sizes (HKUST traffic generator)",
    ),
    // ---- parsimon-eval workload/distributions: `<bytes> <cdf_percent>`
    ds(
        "cdf-websearch-parsimon",
        "parsimon_eval/distributions/websearch.txt",
        PARSIMON,
        PARSIMON_C,
        "workload/distributions/websearch.txt",
        "523d92fd941790c770a7a4cbdffaf715e043ef9fd4da2db6374852716bee5ed6",
        117,
        PCT,
        "Web search flow sizes (parsimon copy; same bytes as cdf-websearch-hpcc)",
    ),
    ds(
        "cdf-facebook-parsimon",
        "parsimon_eval/distributions/facebook/facebook.txt",
        PARSIMON,
        PARSIMON_C,
        "workload/distributions/facebook/facebook.txt",
        "0cb8d61d7911d633bbd115bb343fd6fb14dcbd3666fe9159bfaa9b1bc101c301",
        165,
        PCT,
        "Facebook Hadoop flow sizes (parsimon copy; same bytes as cdf-fbhadoop-hpcc)",
    ),
    ds(
        "cdf-cachefollower-parsimon",
        "parsimon_eval/distributions/facebook/cachefollower-all.txt",
        PARSIMON,
        PARSIMON_C,
        "workload/distributions/facebook/cachefollower-all.txt",
        "bdd78608e440fa293b8e001ca4a041848e65c030657cfea6c74c85f402342561",
        923,
        PCT,
        "Meta cache follower flow sizes (all locality)",
    ),
    ds(
        "cdf-hadoop-parsimon",
        "parsimon_eval/distributions/facebook/hadoop-all.txt",
        PARSIMON,
        PARSIMON_C,
        "workload/distributions/facebook/hadoop-all.txt",
        "7450da4e5fa49930247ae96d1158b99bce9e4625b2b99e1206c616efa8e695a5",
        771,
        PCT,
        "Meta Hadoop flow sizes (all locality)",
    ),
    ds(
        "cdf-hadoop-intracluster-parsimon",
        "parsimon_eval/distributions/facebook/hadoop-intracluster.txt",
        PARSIMON,
        PARSIMON_C,
        "workload/distributions/facebook/hadoop-intracluster.txt",
        "38d5e0861a4755d903205877035191b924b5509ce35a7949d1ad48805ba969c5",
        1288,
        PCT,
        "Meta Hadoop flow sizes (intra-cluster)",
    ),
    ds(
        "cdf-hadoop-intrarack-parsimon",
        "parsimon_eval/distributions/facebook/hadoop-intrarack.txt",
        PARSIMON,
        PARSIMON_C,
        "workload/distributions/facebook/hadoop-intrarack.txt",
        "f02cb92515a1302cbd14fd350acc1fac052e64257b3bacbde9704d039681c383",
        1459,
        PCT,
        "Meta Hadoop flow sizes (intra-rack)",
    ),
    ds(
        "cdf-webserver-parsimon",
        "parsimon_eval/distributions/facebook/webserver-all.txt",
        PARSIMON,
        PARSIMON_C,
        "workload/distributions/facebook/webserver-all.txt",
        "b764c991d01f5cb46240755ca9c75b0c0a00cc07a001fc5bf273f94034021e84",
        790,
        PCT,
        "Meta web server flow sizes (all locality)",
    ),
    // ---- parsimon-eval workload/spatials: Meta rack-to-rack matrices
    ds(
        "tm-cluster-a",
        "parsimon_eval/spatials/cluster_a.json",
        PARSIMON,
        PARSIMON_C,
        "workload/spatials/cluster_a.json",
        "1bd0d81b7ee1a0adc29bce043d18b85c9e86677be6f04b14d31aaf8f2d486d16",
        448144,
        Format::TrafficMatrix,
        "Meta cluster A rack-to-rack traffic matrix: 155 racks in 4 pods",
    ),
    ds(
        "tm-cluster-b",
        "parsimon_eval/spatials/cluster_b.json",
        PARSIMON,
        PARSIMON_C,
        "workload/spatials/cluster_b.json",
        "3b56216d69d160f485d2392060d5d6aae097e2f523b339d74883142a5a7b2adb",
        1895795,
        Format::TrafficMatrix,
        "Meta cluster B rack-to-rack traffic matrix: 324 racks in 8 pods",
    ),
    ds(
        "tm-cluster-c",
        "parsimon_eval/spatials/cluster_c.json",
        PARSIMON,
        PARSIMON_C,
        "workload/spatials/cluster_c.json",
        "9b2ec6371cfbed96e46849dbb8890dcf5e6cbd29498d4316eb4ca6503566fc92",
        2337044,
        Format::TrafficMatrix,
        "Meta cluster C rack-to-rack traffic matrix: 365 racks in 9 pods",
    ),
    ds(
        "tm-cluster-a-2-16",
        "parsimon_eval/spatials/cluster_a_2_16.json",
        PARSIMON,
        PARSIMON_C,
        "workload/spatials/cluster_a_2_16.json",
        "f81d26c6d80b47b028369be605a5cd126df92981213d323fdbdfc10d5f3a4ad3",
        14758,
        Format::TrafficMatrix,
        "Meta cluster A excerpt: 2 pods x 16 racks",
    ),
    ds(
        "tm-cluster-b-2-16",
        "parsimon_eval/spatials/cluster_b_2_16.json",
        PARSIMON,
        PARSIMON_C,
        "workload/spatials/cluster_b_2_16.json",
        "1fb74589e267e20be37d59801363ff67c56a21753ed915e1ed48f69ed90f499c",
        15587,
        Format::TrafficMatrix,
        "Meta cluster B excerpt: 2 pods x 16 racks",
    ),
    ds(
        "tm-cluster-c-2-16",
        "parsimon_eval/spatials/cluster_c_2_16.json",
        PARSIMON,
        PARSIMON_C,
        "workload/spatials/cluster_c_2_16.json",
        "7950b9d7aa96876acf9e5bfcb65c369ba92992aa8b395a6fbd5405aa98e2522e",
        15199,
        Format::TrafficMatrix,
        "Meta cluster C excerpt: 2 pods x 16 racks",
    ),
    // ---- Alibaba and scheduler inputs
    ds(
        "alibaba-v2018-machine-meta",
        "alibaba_v2018_machine_meta/machine_meta.csv",
        "gohsyi/cluster_optimization",
        "d147f574ff6e",
        "data/machine_meta.csv",
        "3ccd30a264d32ccc4f2a58dfc23a9055db8992a40dac63d80f49f0a41daaf31d",
        552566,
        Format::MachineMeta,
        "Alibaba 2018 machine meta: 4,034 machines with failure domains, CPUs, memory, status",
    ),
    ds(
        "alibaba-v2018-machine-usage-sample",
        "alibaba_v2018_machine_meta/machine_usage_sample.csv",
        "gohsyi/cluster_optimization",
        "d147f574ff6e",
        "data/machine_usage.csv",
        "a51d7fcc009e11bbdbc1060c4ae3ed176447fd369be4ec404f4d36d08c64f775",
        3678924,
        Format::MachineUsage,
        "Alibaba 2018 machine usage, first 100,002 rows: CPU, memory, normalised net in/out",
    ),
    ds(
        "cloudsimpy-jobs",
        "cloudsimpy_alibaba_jobs/jobs.csv",
        "RobertLexis/CloudSimPy",
        "c103672f51d6",
        "playground/DAG/jobs_files/jobs.csv",
        "b422d8aa185fe5025b139d6843d6d49b91fab486c487df4d606aa52fffba4a2b",
        1921566,
        Format::CloudSimPyJobs,
        "Alibaba-derived batch tasks: 31,756 tasks in 5,216 jobs (submit, duration, cpu, memory, instances)",
    ),
    ds(
        "alibaba-gpu-v2023-pods",
        "alibaba_clusterdata/gpu-v2023/openb_pod_list_default.csv",
        ALI,
        ALI_C,
        "cluster-trace-gpu-v2023/csv/openb_pod_list_default.csv",
        "1ee7ed79c27a3b0861cda8ddba86a004c6aba904caafa329a76ae93ca63834a8",
        575468,
        Format::GpuPods,
        "Alibaba GPU cluster 2023: 8,152 pods with cpu/memory/gpu requests and creation times",
    ),
    ds(
        "alibaba-gpu-v2023-nodes",
        "alibaba_clusterdata/gpu-v2023/openb_node_list_all_node.csv",
        ALI,
        ALI_C,
        "cluster-trace-gpu-v2023/csv/openb_node_list_all_node.csv",
        "5a85c2af79c66a1efff8bbcbda430400aae56d8431370d738480967e1a9c6b15",
        52287,
        Format::GpuNodes,
        "Alibaba GPU cluster 2023: 1,523 nodes with CPU, memory, GPU count and model",
    ),
    ds(
        "alibaba-gpu-v2023-gpu-nodes",
        "alibaba_clusterdata/gpu-v2023/openb_node_list_gpu_node.csv",
        ALI,
        ALI_C,
        "cluster-trace-gpu-v2023/csv/openb_node_list_gpu_node.csv",
        "2beca64b4d3dfa342036a34b56a495c6cef9225db836c81f541282cb1df320b5",
        42353,
        Format::GpuNodes,
        "Alibaba GPU cluster 2023: the GPU nodes only",
    ),
];

/// The dataset called `name`.
pub fn find(name: &str) -> Result<&'static Dataset, crate::DataError> {
    DATASETS.iter().find(|d| d.name == name).ok_or_else(|| crate::DataError::UnknownDataset {
        name: name.to_string(),
        known: DATASETS.iter().map(|d| d.name).collect::<Vec<_>>().join(", "),
    })
}
