//! A child process whose whole tree ends with it: a browser starts
//! renderers, a GPU process, a zygote or a fork server, and none of them
//! may outlive `cargo wasmprof`.
//!
//! On Unix the child leads a process group of its own, which is killed
//! whole; on Linux wasmprof then waits until no process of the group is
//! left (a killed process takes a moment to die on a busy machine). On
//! Windows the child is put in a job object that kills every process in it
//! when it is terminated or its last handle closes. (A process the child
//! starts in the instant between its spawn and its assignment to the job
//! would escape it; a browser starts its helpers well after that.)

use std::io;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// A running child process, the root of a tree of its own.
pub(crate) struct ProcessTree {
    child: Child,
    #[cfg(windows)]
    job: windows_job::Job,
}

impl ProcessTree {
    /// Spawns `command` as the root of a tree of its own.
    pub(crate) fn spawn(command: &mut Command) -> io::Result<ProcessTree> {
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            command.process_group(0);
        }
        #[cfg(windows)]
        {
            let job = windows_job::Job::new()?;
            let child = command.spawn()?;
            if let Err(e) = job.assign(&child) {
                let mut child = child;
                let _ = child.kill();
                let _ = child.wait();
                return Err(e);
            }
            Ok(ProcessTree { child, job })
        }
        #[cfg(not(windows))]
        Ok(ProcessTree {
            child: command.spawn()?,
        })
    }

    /// The root's process id (on Unix, its process group's too).
    pub(crate) fn id(&self) -> u32 {
        self.child.id()
    }

    pub(crate) fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Whether the root has exited.
    pub(crate) fn has_exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Gives the root `grace` to exit by itself (it was asked to close),
    /// then ends every process of the tree, and waits up to ten seconds
    /// until none runs.
    pub(crate) fn end(&mut self, grace: Duration) {
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline && !self.has_exited() {
            std::thread::sleep(Duration::from_millis(20));
        }
        self.kill_tree();
        let _ = self.child.kill();
        let _ = self.child.wait();
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.tree_is_running() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[cfg(unix)]
    fn kill_tree(&mut self) {
        // SAFETY: signalling the process group this process created.
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
    }

    #[cfg(windows)]
    fn kill_tree(&mut self) {
        self.job.terminate();
    }

    #[cfg(not(any(unix, windows)))]
    fn kill_tree(&mut self) {}

    /// Whether a process of the tree still runs (zombies, which only wait
    /// to be reaped, do not count).
    #[cfg(target_os = "linux")]
    fn tree_is_running(&self) -> bool {
        let group = self.child.id();
        processes().any(|process| process.group == group && !process.zombie)
    }

    /// Elsewhere the kill has to do: there is no cheap way to tell a
    /// zombie from a live process (and on Windows the job ends them all).
    #[cfg(not(target_os = "linux"))]
    fn tree_is_running(&self) -> bool {
        false
    }
}

/// What Linux's `/proc` says of a process.
#[cfg(target_os = "linux")]
pub(crate) struct ProcessInfo {
    pub pid: u32,
    pub group: u32,
    pub zombie: bool,
    /// Its command line, words joined by spaces.
    pub command: String,
}

/// Every process `/proc` lists.
#[cfg(target_os = "linux")]
pub(crate) fn processes() -> impl Iterator<Item = ProcessInfo> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // After the parenthesised name: state, ppid, pgrp, …
            let mut fields = stat.rsplit(") ").next()?.split_whitespace();
            let state = fields.next()?;
            let group = fields.nth(1)?.parse().ok()?;
            let command = std::fs::read(entry.path().join("cmdline"))
                .map(|bytes| {
                    String::from_utf8_lossy(&bytes)
                        .split('\0')
                        .filter(|w| !w.is_empty())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .unwrap_or_default();
            Some(ProcessInfo {
                pid,
                group,
                zombie: matches!(state, "Z" | "X"),
                command,
            })
        })
}

#[cfg(windows)]
mod windows_job {
    //! A job object that kills its processes when terminated or closed.

    use std::io;
    use std::os::windows::io::AsRawHandle;
    use std::process::Child;

    use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
    use windows_sys::Win32::System::JobObjects::{
        AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
        JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation,
        SetInformationJobObject, TerminateJobObject,
    };

    pub(super) struct Job(HANDLE);

    impl Job {
        pub(super) fn new() -> io::Result<Job> {
            // SAFETY: plain Win32 calls; the handle is checked and owned.
            unsafe {
                let handle = CreateJobObjectW(std::ptr::null(), std::ptr::null());
                if handle.is_null() {
                    return Err(io::Error::last_os_error());
                }
                let job = Job(handle);
                let mut info: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = std::mem::zeroed();
                info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
                let set = SetInformationJobObject(
                    job.0,
                    JobObjectExtendedLimitInformation,
                    &info as *const _ as *const std::ffi::c_void,
                    std::mem::size_of_val(&info) as u32,
                );
                if set == 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(job)
            }
        }

        pub(super) fn assign(&self, child: &Child) -> io::Result<()> {
            // SAFETY: both handles are live for the call.
            let assigned =
                unsafe { AssignProcessToJobObject(self.0, child.as_raw_handle() as HANDLE) };
            if assigned == 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        }

        pub(super) fn terminate(&self) {
            // SAFETY: the handle is live.
            unsafe {
                TerminateJobObject(self.0, 1);
            }
        }
    }

    impl Drop for Job {
        fn drop(&mut self) {
            // SAFETY: closed once, here; with KILL_ON_JOB_CLOSE this ends
            // whatever of the tree is left.
            unsafe {
                CloseHandle(self.0);
            }
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn ending_the_tree_ends_the_grandchildren_too() {
        // A shell that starts a sleeping grandchild, then sleeps itself.
        let mut tree = ProcessTree::spawn(
            Command::new("sh")
                .arg("-c")
                .arg("sleep 300 & echo $! ; sleep 300")
                .stdout(std::process::Stdio::piped()),
        )
        .unwrap();
        let mut line = String::new();
        use std::io::BufRead;
        std::io::BufReader::new(tree.child().stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let grandchild: u32 = line.trim().parse().unwrap();
        let alive = |pid: u32| processes().any(|p| p.pid == pid && !p.zombie);
        assert!(alive(grandchild));
        tree.end(Duration::ZERO);
        assert!(tree.has_exited());
        assert!(
            !alive(grandchild),
            "the grandchild {grandchild} outlived its tree"
        );
    }
}
