-- Create distributed workloads with unique names; each asks for more CPU cores than the
-- machine has, so it is admitted by nobody and stays Pending. Environment: TOKEN, CLUSTER_ID,
-- RUN (a prefix unique to this run).
local token = os.getenv("TOKEN")
local cluster = os.getenv("CLUSTER_ID")
local run = os.getenv("RUN")
counter = 0
thread_number = 0

setup = function(thread)
  thread_number = thread_number + 1
  thread:set("thread_number", thread_number)
end

init = function()
  wrk.method = "POST"
  wrk.headers["Authorization"] = "Bearer " .. token
  wrk.headers["Content-Type"] = "application/json"
end

request = function()
  counter = counter + 1
  local body = string.format(
    '{"name":"%s-%d-%d","projectId":"1","clusterId":"%s","spec":{"image":"python:3.11",' ..
    '"distributedFramework":"PyTorch","numWorkers":2,"command":"python3","args":"train.py",' ..
    '"compute":{"cpuCoreRequest":100000}}}',
    run, thread_number, counter, cluster)
  return wrk.format(nil, "/api/v1/workloads/distributed", nil, body)
end
